"""Students' work folders on every node of a swarm: the manager serves the class's ``home/`` over
SFTP (``docker/swarm-homes``), and each node that runs students' servers mounts it with sshfs at
``MOUNTS/<class>``. A student's server then mounts its own folder from there on whichever node
it starts, and a node lost takes no work with it: the folders never left the manager.

Why sshfs: it needs only FUSE on the nodes and SSH on the manager. NFS needs kernel support that
this machine's kernel lacks (no ``CONFIG_NFS_FS`` or ``CONFIG_NFSD``), and placement pinned per
student would lose a student's work with their node.

The keys are the class's own, made once (``secrets/homes``): a host key, so that nodes know the
server, and one node key, the only login the server accepts.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.core.files import write_atomic

from .images import HOMES_IMAGE

FOLDER = "homes"
MOUNTS = "/var/lib/jaxcourse-homes"  # on each node: MOUNTS/<class> is the class's home/
PORT = 2222
LAB_LABEL = "jaxcourse.lab"  # a node label: yes where students' servers may run (and the homes are mounted)
USER = "jovyan"  # uid 1000, as in students' servers: what they write is theirs on the manager


@dataclass(frozen=True)
class HomesKeys:
    folder: Path

    @property
    def host_key(self) -> Path:
        return self.folder / "host_key"

    @property
    def node_key(self) -> Path:
        return self.folder / "node_key"

    @property
    def known_hosts(self) -> Path:
        return self.folder / "known_hosts"


def keys(secrets: Path, address: str, port: int = PORT) -> HomesKeys:
    """The class's SFTP keys under ``secrets`` (made the first time), and a known_hosts for the
    server at ``address:port``, written again whenever the address changes."""
    made = HomesKeys(secrets / FOLDER)
    if not (made.host_key.is_file() and made.node_key.is_file()):
        made.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        for path in (made.host_key, made.node_key):
            private, public = _ed25519()
            write_atomic(path, private)
            path.chmod(0o600)
            write_atomic(path.with_name(path.name + ".pub"), public)
    host_public = made.host_key.with_name("host_key.pub").read_text().strip()
    write_atomic(made.known_hosts, f"[{address}]:{port} {host_public}\n")
    return made


def _ed25519() -> tuple[bytes, str]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return private, public.decode() + " jaxcourse\n"


def server_options(home: Path, made: HomesKeys, address: str, port: int, labels: dict[str, str]) -> dict[str, Any]:
    """The SFTP server's container: the class's ``home`` in its chroot, published on the swarm's
    address only. Root inside (sshd's privilege separation and chroot), with only the
    capabilities those need."""
    return {
        "image": HOMES_IMAGE,
        "labels": labels,
        "ports": {f"{PORT}/tcp": (address, port)},
        "volumes": {
            str(home): {"bind": "/srv/homes/home", "mode": "rw"},
            str(made.folder): {"bind": "/etc/jaxcourse/homes", "mode": "ro"},
        },
        "cap_drop": ["ALL"],
        "cap_add": ["CHOWN", "SETUID", "SETGID", "SYS_CHROOT", "DAC_OVERRIDE", "KILL", "AUDIT_WRITE"],
        "security_opt": ["no-new-privileges"],
        "read_only": True,
        "tmpfs": {"/run": "size=4m,mode=0755"},
    }


def mount_point(class_name: str) -> str:
    return f"{MOUNTS}/{class_name}"


def mount_command(class_name: str, address: str, made: HomesKeys, port: int = PORT) -> list[str]:
    """What a node runs as root (once, and after each reboot) to see the class's homes: the keys
    are ``made``'s files, copied to the node at the same paths."""
    options = ",".join(
        [
            "allow_other",
            "reconnect",
            "ServerAliveInterval=5",
            "ServerAliveCountMax=3",
            f"IdentityFile={made.node_key}",
            f"UserKnownHostsFile={made.known_hosts}",
            "StrictHostKeyChecking=yes",
            f"port={port}",
        ]
    )
    target = mount_point(class_name)
    return [
        "sh",
        "-c",
        f"mkdir -p {shlex.quote(target)} && exec sshfs -o {shlex.quote(options)} "
        f"{USER}@{address}:/home {shlex.quote(target)}",
    ]
