"""The class hub's internal TLS (JupyterHub's ``internal_ssl``, on for a class on a swarm, whose
traffic crosses hosts): how a server or a service calls the hub's parts, and how the exchange
listens for servers.

JupyterHub gives each server and service its own certificate, signed by the class's
``notebooks-ca``, and the CAs it may trust, as ``JUPYTERHUB_SSL_*`` variables. The hub's parts
ask each caller for its certificate, so only what the hub started can even open a connection.
"""

from __future__ import annotations

import os
import ssl
from pathlib import Path

KEY, CERT, TRUST = "JUPYTERHUB_SSL_KEYFILE", "JUPYTERHUB_SSL_CERTFILE", "JUPYTERHUB_SSL_CLIENT_CA"


class InternalTLSError(RuntimeError):
    """An https address with no certificate to call it with."""


def client_context(url: str) -> ssl.SSLContext | None:
    """For an https ``url``, a context presenting this process's certificate and checking the other
    end against the CAs it was given; None for plain http (a class on one host)."""
    if not url.startswith("https:"):
        return None
    missing = [name for name in (KEY, CERT, TRUST) if not os.environ.get(name)]
    if missing:
        raise InternalTLSError(
            f"{url} speaks TLS but this process holds no certificate from the class hub "
            f"({', '.join(missing)} unset): run it in a server the hub started"
        )
    context = ssl.create_default_context(cafile=os.environ[TRUST])
    context.load_cert_chain(os.environ[CERT], os.environ[KEY])
    return context


def server_context(store: Path) -> ssl.SSLContext:
    """A listener inside the hub's container, in JupyterHub's certificate store ``store``: it shows
    the hub's own certificate (servers trust its CA and know it by the hub's name) and takes only
    callers whose certificate the class's notebooks-ca signed (students' servers)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=store / "notebooks-ca" / "notebooks-ca.crt")
    context.load_cert_chain(store / "hub-internal" / "hub-internal.crt", store / "hub-internal" / "hub-internal.key")
    context.verify_mode = ssl.CERT_REQUIRED
    return context
