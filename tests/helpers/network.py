"""What the network tests listen with: a TCP server on every address of this machine that
remembers who connected, for tests that prove a container cannot reach the host; and what a probe
run inside a student's server can call."""

from __future__ import annotations

import socket
import threading


class Listener:
    """A TCP server on every address of this machine that remembers who connected."""

    def __init__(self) -> None:
        self.server = socket.create_server(("0.0.0.0", 0))
        self.port = self.server.getsockname()[1]
        self.connections: list[str] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, peer = self.server.accept()
            except OSError:
                return
            self.connections.append(peer[0])
            conn.close()


# What a probe from inside her container can call: connect(host, port), "connected" or the error's
# name; http(url, method=) with her server's own token (and, for https, her server's certificate
# unless cert=False), the status or the error's name.
PROBES = """
import json, os, socket, ssl, urllib.request, urllib.error
def connect(host, port):
    try:
        socket.create_connection((host, port), timeout=3).close()
        return "connected"
    except OSError as err:
        return type(err).__name__
def tls(cert):
    context = ssl.create_default_context(cafile=os.environ["JUPYTERHUB_SSL_CLIENT_CA"])
    if cert:
        context.load_cert_chain(os.environ["JUPYTERHUB_SSL_CERTFILE"], os.environ["JUPYTERHUB_SSL_KEYFILE"])
    return context
def http(url, cert=True, method="GET"):
    req = urllib.request.Request(url, method=method,
                                 headers={"Authorization": "token " + os.environ["JUPYTERHUB_API_TOKEN"]})
    try:
        return urllib.request.urlopen(req, timeout=20, context=tls(cert) if url.startswith("https:") else None).status
    except urllib.error.HTTPError as err:
        return err.code
    except OSError as err:
        return type(err).__name__
"""
