"""The queue's TLS where it crosses hosts: a CA of the class's own, which signs one certificate,
Redis's. Every client checks Redis against that CA (``queue/app.py``); nothing else trusts it.

The CA's key is thrown away once Redis's certificate is signed, so nothing can sign another
certificate the class would trust. Kept in the class directory's secrets (mode 0700), made once.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from ..core.files import write_atomic

FOLDER = "queue-tls"
DAYS = 3650  # a class lasts a term; the files are made again when deleted


@dataclass(frozen=True)
class QueueTLS:
    folder: Path

    @property
    def ca(self) -> Path:
        return self.folder / "ca.pem"

    @property
    def cert(self) -> Path:
        return self.folder / "redis.pem"

    @property
    def key(self) -> Path:
        return self.folder / "redis-key.pem"


def issue(secrets: Path, redis_name: str) -> QueueTLS:
    """The class's queue TLS files under ``secrets`` (made the first time), for Redis at ``redis_name``."""
    tls = QueueTLS(secrets / FOLDER)
    if tls.ca.is_file() and tls.cert.is_file() and tls.key.is_file():
        return tls
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{redis_name} queue CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    cert = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, redis_name)]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=DAYS))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(redis_name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    tls.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    pem = serialization.Encoding.PEM
    write_atomic(tls.key, key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    write_atomic(tls.cert, cert.public_bytes(pem))
    write_atomic(tls.ca, ca.public_bytes(pem))
    tls.key.chmod(0o600)
    return tls
