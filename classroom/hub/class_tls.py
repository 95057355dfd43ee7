"""TLS where a class's services cross hosts: for each server (Redis, the image registry) a CA of
its own, which signs one certificate, that server's. Its clients check it against that CA (the
queue: ``queue/app.py``; the nodes' engines: ``/etc/docker/certs.d``); nothing else trusts it.

The CA's key is thrown away once the certificate is signed, so nothing can sign another
certificate the class would trust. Kept in the class directory's secrets (mode 0700), made once,
and again (a new CA too) when the server is reached by another name: a manager that moved.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.core.files import write_atomic

if TYPE_CHECKING:
    from cryptography.x509 import GeneralName

DAYS = 3650  # a class lasts a term; the files are made again when deleted


@dataclass(frozen=True)
class ServerTLS:
    folder: Path
    stem: str  # the server's files are <stem>.pem and <stem>-key.pem

    @property
    def ca(self) -> Path:
        return self.folder / "ca.pem"

    @property
    def cert(self) -> Path:
        return self.folder / f"{self.stem}.pem"

    @property
    def key(self) -> Path:
        return self.folder / f"{self.stem}-key.pem"


def issue(folder: Path, stem: str, name: str) -> ServerTLS:
    """The TLS files in ``folder`` for a server reached as ``name``, a host name or an IP
    address: made the first time, and whenever the certificate there names another."""
    tls = ServerTLS(folder, stem)
    if tls.ca.is_file() and tls.cert.is_file() and tls.key.is_file() and named(tls) == name:
        return tls
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name} {stem} CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=DAYS))
        .add_extension(x509.SubjectAlternativeName([_subject(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    tls.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    pem = serialization.Encoding.PEM
    write_atomic(tls.key, key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    write_atomic(tls.cert, cert.public_bytes(pem))
    write_atomic(tls.ca, ca.public_bytes(pem))
    tls.key.chmod(0o600)
    return tls


def named(tls: ServerTLS) -> str:
    """The name the server's certificate is for (its one subject alternative name)."""
    from cryptography import x509

    cert = x509.load_pem_x509_certificate(tls.cert.read_bytes())
    (subject,) = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return str(subject.value)


def _subject(name: str) -> GeneralName:
    """An IP address's SAN for an address (an engine checks a registry's by IP), else a DNS name's."""
    from cryptography import x509

    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)
