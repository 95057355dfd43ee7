"""What the network tests listen with: a TCP server on every address of this machine that
remembers who connected, for tests that prove a container cannot reach the host."""

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
