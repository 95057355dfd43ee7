"""The class's service images, built like the student image (allow-listed context, the offline
base where no registry answers): ``jaxcourse-hub`` (JupyterHub, the proxy, DockerSpawner, the
course's authenticator and exchange service), ``jaxcourse-redis`` (the grading queue) and, on a
swarm, ``jaxcourse-homes`` (the work folders over SFTP) and ``jaxcourse-registry`` (the course
images for the nodes).

Each is built on every ``hub up`` that uses it: Docker's layer cache makes an unchanged build take seconds,
and a changed package is never served stale.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.engine.images import PACKAGES, build_image, choose_base, git_revision, tar_context

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from docker.client import DockerClient

HUB_IMAGE = "jaxcourse-hub:latest"
REDIS_IMAGE = "jaxcourse-redis:latest"
HUB_FILES = (
    "docker/hub/Dockerfile",
    "docker/hub/jupyterhub_config.py",
    "docker/hub/package.json",
    "docker/hub/package-lock.json",
    "requirements/hub.lock",
    "pyproject.toml",
    "README.md",
)
REDIS_FILES = ("docker/redis/Dockerfile", "docker/redis/start.sh")
HOMES_IMAGE = "jaxcourse-homes:latest"  # a swarm's work folders over SFTP (hub/homes.py)
HOMES_FILES = ("docker/swarm-homes/Dockerfile", "docker/swarm-homes/sshd_config", "docker/swarm-homes/start.sh")
REGISTRY_IMAGE = "jaxcourse-registry:latest"  # a swarm's course images, for its nodes (hub/registry.py)
REGISTRY_FILES = (
    "docker/swarm-registry/Dockerfile",
    "docker/swarm-registry/push.yml",
    "docker/swarm-registry/serve.yml",
)


def _entries(repo: Path, names: tuple[str, ...], package: bool) -> dict[str, Path | bytes | None]:
    entries: dict[str, Path | bytes | None] = {name: repo / name for name in names}
    if package:  # the package's Python files only: no caches, no data
        for name in PACKAGES:
            entries.update({p.relative_to(repo).as_posix(): p for p in sorted((repo / name).rglob("*.py"))})
    return entries


def build_hub(client: DockerClient, repo: Path) -> str:
    base = choose_base(client, None)
    args = {"BASE_IMAGE": base, "GIT_REVISION": git_revision(repo)}
    context = tar_context(_entries(repo, HUB_FILES, package=True))
    return build_image(client, HUB_IMAGE, context, "docker/hub/Dockerfile", args)


def build_redis(client: DockerClient, repo: Path) -> str:
    return _build_plain(client, repo, REDIS_IMAGE, REDIS_FILES)


def build_homes(client: DockerClient, repo: Path) -> str:
    return _build_plain(client, repo, HOMES_IMAGE, HOMES_FILES)


def build_registry(client: DockerClient, repo: Path) -> str:
    return _build_plain(client, repo, REGISTRY_IMAGE, REGISTRY_FILES)


def _build_plain(client: DockerClient, repo: Path, name: str, files: tuple[str, ...]) -> str:
    """An image of the base and ``files`` only (the first is its Dockerfile), no package."""
    base = choose_base(client, None)
    context = tar_context(_entries(repo, files, package=False))
    return build_image(client, name, context, files[0], {"BASE_IMAGE": base})
