"""The exchange on a class that crosses hosts (a swarm): the proxy keeps plain HTTP on loopback,
students' servers reach it only by TLS, with a certificate the hub issued, and the clients (a
server's exchange plugin, the quota service) call by TLS what the hub hands them as https.

The certificates are JupyterHub's own (``internal_ssl``), made as the hub makes them."""

from __future__ import annotations

import asyncio
import os
import ssl
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from certipy import Certipy
from jupyterhub.app import JupyterHub
from tornado import web

from classroom import environment, internal_tls
from classroom.exchange import service

from ...helpers.net import free_port


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A hub's certificate store: its CAs and own certificate, a student's server's certificate
    (notebooks-ca), and an outsider's from a CA of its own."""
    where = tmp_path_factory.mktemp("internal-ssl")

    async def make() -> None:
        JupyterHub(internal_ssl=True, internal_certs_location=str(where)).init_internal_ssl()

    asyncio.run(make())
    certipy = Certipy(store_dir=str(where))
    certipy.create_signed_pair("user-alice", "notebooks-ca", alt_names=["DNS:localhost"])
    certipy.create_ca("outsider-ca")
    certipy.create_signed_pair("outsider", "outsider-ca", alt_names=["DNS:localhost"])
    return where


class Hello(web.RequestHandler):
    def get(self) -> None:
        self.write("hello")


@pytest.fixture
def listening(store, monkeypatch):
    """The exchange's listeners, as the swarm's hub configures them, serving a page."""
    monkeypatch.setenv(environment.EXCHANGE_TLS, str(store))
    monkeypatch.setenv(environment.EXCHANGE_TLS_PORT, str(free_port()))
    monkeypatch.delenv(environment.EXCHANGE_BIND, raising=False)
    found = service.listeners(free_port(), "127.0.0.1")
    started, loop = threading.Event(), asyncio.new_event_loop()

    async def serve() -> None:
        app = web.Application([(r"/", Hello)])
        for port, address, tls in found:
            app.listen(port, address, ssl_options=tls)
        started.set()

    thread = threading.Thread(target=lambda: (loop.run_until_complete(serve()), loop.run_forever()), daemon=True)
    thread.start()
    started.wait(10)
    yield found
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def _as(monkeypatch, store: Path, name: str) -> None:
    """This process as a server or service the hub started: its certificate, and the CAs JupyterHub
    tells a server to trust (hub-ca, proxy-client-ca)."""
    monkeypatch.setenv(internal_tls.KEY, str(store / name / f"{name}.key"))
    monkeypatch.setenv(internal_tls.CERT, str(store / name / f"{name}.crt"))
    monkeypatch.setenv(internal_tls.TRUST, str(store / "notebooks-ca_trust.crt"))


def _get(url: str, context: ssl.SSLContext | None = None) -> int | str:
    try:
        return int(urllib.request.urlopen(url, timeout=10, context=context).status)
    except urllib.error.HTTPError as err:
        return err.code
    except OSError as err:
        return type(err).__name__


def test_the_proxy_s_port_stays_on_loopback_and_servers_get_a_tls_port(listening):
    (plain_port, plain_at, plain_tls), (tls_port, tls_at, tls) = listening
    assert (plain_at, plain_tls) == ("127.0.0.1", None)
    assert tls_port == int(os.environ[environment.EXCHANGE_TLS_PORT]) != plain_port
    assert tls_at == "127.0.0.1" and isinstance(tls, ssl.SSLContext)  # the hub's own address when no bind is set
    assert tls.verify_mode == ssl.CERT_REQUIRED
    assert _get(f"http://127.0.0.1:{plain_port}/") == 200


def test_a_server_the_hub_started_reaches_the_tls_port_by_its_certificate(listening, store, monkeypatch):
    _as(monkeypatch, store, "user-alice")
    url = f"https://localhost:{listening[1][0]}/"
    assert _get(url, internal_tls.client_context(url)) == 200


@pytest.mark.parametrize(
    "caller",
    ["plain HTTP", "no certificate", "an outsider's certificate", "a server that does not check the hub's"],
)
def test_anything_else_gets_no_answer_on_the_tls_port(listening, store, monkeypatch, caller):
    """No HTTP status at all: the connection ends before a request is read."""
    port = listening[1][0]
    if caller == "plain HTTP":
        assert isinstance(_get(f"http://localhost:{port}/"), str)
        return
    context = ssl.create_default_context(cafile=store / "notebooks-ca_trust.crt")
    if caller == "an outsider's certificate":
        context.load_cert_chain(store / "outsider" / "outsider.crt", store / "outsider" / "outsider.key")
    if caller == "a server that does not check the hub's":  # its own certificate, but trusting no CA
        context = ssl.create_default_context()
        context.load_cert_chain(store / "user-alice" / "user-alice.crt", store / "user-alice" / "user-alice.key")
    got = _get(f"https://localhost:{port}/", context)
    assert isinstance(got, str), got


def test_on_one_host_the_exchange_keeps_one_plain_listener(monkeypatch):
    monkeypatch.delenv(environment.EXCHANGE_TLS, raising=False)
    monkeypatch.setenv(environment.EXCHANGE_BIND, "0.0.0.0")
    assert service.listeners(10101, "127.0.0.1") == [(10101, "0.0.0.0", None)]


def test_a_client_calls_plain_http_as_before_and_https_only_with_a_certificate(monkeypatch):
    assert internal_tls.client_context("http://hub:10101/") is None
    for name in (internal_tls.KEY, internal_tls.CERT, internal_tls.TRUST):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(internal_tls.InternalTLSError) as err:
        internal_tls.client_context("https://hub:10102/")
    assert str(err.value) == (
        "https://hub:10102/ speaks TLS but this process holds no certificate from the class hub "
        "(JUPYTERHUB_SSL_KEYFILE, JUPYTERHUB_SSL_CERTFILE, JUPYTERHUB_SSL_CLIENT_CA unset): "
        "run it in a server the hub started"
    )
