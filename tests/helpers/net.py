"""This machine's network, as the tests use it."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A loopback port no one listens on now (the OS's pick; free until someone binds it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
