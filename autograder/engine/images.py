"""Build the student images (cpu, cuda, tpu) with docker-py: `jaxcourse image build`.

The build context is assembled here, file by file, from an allow-list: the Dockerfile can only
ever see what a student may see (lectures, released assignments, the autograder package, the
lock), never solutions/, assignments/source/ or a gradebook. A notebook in the context that still
holds a solution or hidden-test marker stops the build before Docker sees it.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import re
import subprocess
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import environment
from ..core.errors import JaxcourseError

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from docker.client import DockerClient

# The distribution's packages (pyproject.toml), each installed whole in the images: the grader's
# core, the class (a lab's exchange client and cluster engines are in it) and the command line.
PACKAGES = ("autograder", "classroom", "jaxcourse")

VARIANTS = ("cpu", "cuda", "tpu")
REPOSITORY = "jaxcourse"
DEFAULT_BASE = "python:3.11-slim"
COURSE_ID = "jax-distributed"  # assignments/nbgrader_config.py: nbgrader's exchange is keyed by it
OFFLINE_BASE = os.environ.get(environment.OFFLINE_BASE, "jaxcourse/offline-base:bookworm-py3.11")
CA_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")
# As nbgrader writes them in source notebooks: a comment, then the marker.
LEAK_RE = re.compile(rb"#+ *(BEGIN|END) (SOLUTION|HIDDEN TESTS)")
SKIP_PARTS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache"}
# Fixed metadata in the context tar: Docker's layer cache then depends on content only.
EPOCH = 315532800


class ImageError(JaxcourseError):
    """A build that cannot start or did not finish; the message says why in one line."""


class EngineUnavailable(ImageError):
    """No Docker engine answers (not installed, not running, or no permission on its socket)."""


def tag(variant: str) -> str:
    return f"{REPOSITORY}:{variant}"


def connect() -> DockerClient:
    """A client for the local engine, or EngineUnavailable with the reason in one line."""
    try:
        import docker
    except ImportError as err:
        raise EngineUnavailable(f"the docker Python package is missing ({err})") from None
    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except Exception as err:  # docker-py wraps socket, permission and HTTP errors differently
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise EngineUnavailable(f"no Docker engine reachable ({reason[:200]})") from None
    return client


def find_repo(start: Path | None = None) -> Path:
    """The course checkout: the nearest directory upwards holding docker/Dockerfile."""
    env = os.environ.get(environment.ROOT)
    here = Path(env) if env else (start or Path.cwd()).resolve()
    for path in (here, *here.parents):
        if (path / "docker" / "Dockerfile").is_file():
            return path
    raise ImageError(f"no course checkout (docker/Dockerfile) at or above {here}; set JAXCOURSE_ROOT")


@dataclass(frozen=True)
class Sources:
    """What goes into an image. The defaults are the checkout's; tests may point elsewhere.
    ``expected``: the records students' checks judge against (``expected.py``), made by
    ``jaxcourse release`` beside the release."""

    repo: Path
    course: Path
    release: Path
    expected: Path

    @classmethod
    def of(cls, repo: Path) -> Sources:
        return cls(repo, repo / "course", repo / "assignments" / "release", repo / "assignments" / "expected")

    def check(self) -> None:
        for folder, what in ((self.release, "released assignments"), (self.expected, "records for the checks")):
            if not folder.is_dir() or not any(folder.iterdir()):
                raise ImageError(f"no {what} in {folder}: run `jaxcourse release` first")


def lock_path(repo: Path, variant: str) -> Path:
    return repo / "requirements" / f"{variant}.lock"


def lock_sha256(repo: Path, variant: str) -> str:
    return hashlib.sha256(lock_path(repo, variant).read_bytes()).hexdigest()


def git_revision(repo: Path) -> str:
    """HEAD, with ``-dirty`` when the working tree differs: the label must not claim a clean build."""
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + ("-dirty" if dirty else "")


def _files(root: Path, under: Path) -> Iterator[Path]:
    for path in sorted(under.rglob("*")):
        if path.is_file() and not SKIP_PARTS.intersection(path.relative_to(root).parts):
            yield path


def context_files(sources: Sources, variant: str) -> dict[str, Path]:
    """The allow-list: context path -> file on disk. Directories that may be empty are listed too."""
    repo = sources.repo
    files: dict[str, Path] = {}
    for name in ("Dockerfile", "start.sh", "platform.py", "healthy.sh", "seed/START_HERE.md", "lab/overrides.json"):
        files[f"docker/{name}"] = repo / "docker" / name
    for folder in ("jupyter", "jupyter-instructor"):
        for path in _files(repo, repo / "docker" / folder):
            files[path.relative_to(repo).as_posix()] = path
    for lock in {"cpu", variant}:  # the variant's lock installs on top of the shared cpu layer
        files[f"requirements/{lock}.lock"] = lock_path(repo, lock)
    files["pyproject.toml"] = repo / "pyproject.toml"
    for package in PACKAGES:
        for path in _files(repo, repo / package):
            if path.suffix == ".py":
                files[path.relative_to(repo).as_posix()] = path
    for prefix, root in (
        ("course", sources.course),
        ("assignments/release", sources.release),
        ("assignments/expected", sources.expected),
    ):
        if root.is_dir():
            for path in _files(root, root):
                files[f"{prefix}/{path.relative_to(root).as_posix()}"] = path
    return files


def leaks(files: dict[str, Path]) -> list[str]:
    """Context paths that must never reach a student: solution or hidden-test markers."""
    found = []
    for name, path in files.items():
        if name.startswith(("course/", "assignments/")) and LEAK_RE.search(path.read_bytes()):
            found.append(name)
    return found


def _ca_bundle() -> bytes | None:
    """The host's CA bundle, for pip inside the build: some networks reach PyPI only through it."""
    for candidate in (os.environ.get("PIP_CERT"), os.environ.get("SSL_CERT_FILE"), *CA_BUNDLES):
        if candidate and Path(candidate).is_file():
            return Path(candidate).read_bytes()
    return None


def build_context(sources: Sources, variant: str) -> io.BytesIO:
    """The uncompressed tar Docker builds from: the allow-list, the CA bundle, and nothing else."""
    files = context_files(sources, variant)
    missing = sorted(name for name, path in files.items() if not path.is_file())
    if missing:
        raise ImageError(f"missing from the checkout: {', '.join(missing)}")
    leaked = leaks(files)
    if leaked:
        raise ImageError(f"refusing to build: solution or hidden-test markers in {', '.join(leaked)}")
    readme = sources.repo / "README.md"
    entries: dict[str, Path | bytes | None] = {
        "course": None,
        "assignments/release": None,
        "assignments/expected": None,
        **files,
    }
    entries["README.md"] = readme.read_bytes() if readme.is_file() else b""
    return tar_context(entries)


def tar_context(entries: dict[str, Path | bytes | None]) -> io.BytesIO:
    """A build context from ``entries`` (context path -> file, bytes, or None for an empty
    directory), with fixed metadata (the layer cache then depends on content only) and the
    host's CA bundle as ``docker/ca/ca-certificates.crt`` where there is one."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        _add(tar, "docker/ca", None, 0o755)  # COPY needs the directory even when empty
        for name, entry in sorted(entries.items(), key=lambda item: item[0]):
            if isinstance(entry, Path):
                _add(tar, name, entry.read_bytes(), 0o755 if os.access(entry, os.X_OK) else 0o644)
            else:
                _add(tar, name, entry, 0o755 if entry is None else 0o644)
        ca = _ca_bundle()
        if ca is not None:
            _add(tar, "docker/ca/ca-certificates.crt", ca, 0o644)
    buf.seek(0)
    return buf


def _add(tar: tarfile.TarFile, name: str, data: bytes | None, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.mtime, info.mode, info.uid, info.gid = EPOCH, mode, 0, 0
    if data is None:
        info.type = tarfile.DIRTYPE
        tar.addfile(info)
    else:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


def choose_base(client: DockerClient, requested: str | None) -> str:
    """The official slim Python image when it is here or can be pulled, else the offline base."""
    from docker.errors import DockerException, ImageNotFound

    if requested:
        log.info(f"base image: {requested} (requested)")
        return requested
    try:
        client.images.get(DEFAULT_BASE)
        log.info(f"base image: {DEFAULT_BASE} (present)")
        return DEFAULT_BASE
    except ImageNotFound:
        pass
    try:
        client.images.pull(DEFAULT_BASE)
        log.info(f"base image: {DEFAULT_BASE} (pulled)")
        return DEFAULT_BASE
    except DockerException as err:
        why = str(getattr(err, "explanation", None) or err).splitlines()[0][:160]
    try:
        client.images.get(OFFLINE_BASE)
    except ImageNotFound:
        raise ImageError(
            f"cannot pull {DEFAULT_BASE} ({why}) and the offline base {OFFLINE_BASE} is missing: "
            "run `sudo docker/build-offline-base.sh`"
        ) from None
    log.info(f"base image: {OFFLINE_BASE} (offline base: no registry reachable: {why})")
    return OFFLINE_BASE


def build(
    variant: str,
    *,
    client: DockerClient | None = None,
    base: str | None = None,
    sources: Sources | None = None,
    image_tag: str | None = None,
    verbose: bool = False,
) -> str:
    """Build ``jaxcourse:<variant>`` (or ``image_tag``); returns the image id."""
    if variant not in VARIANTS:
        raise ImageError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    sources = sources or Sources.of(find_repo())
    sources.check()
    client = client or connect()
    base_image = choose_base(client, base)
    context = build_context(sources, variant)
    buildargs = {
        "BASE_IMAGE": base_image,
        "VARIANT": variant,
        "GIT_REVISION": git_revision(sources.repo),
        "LOCK_SHA256": lock_sha256(sources.repo, variant),
        "COURSE_ID": COURSE_ID,
    }
    index = os.environ.get("PIP_INDEX_URL", "")
    if index.startswith(("http://", "https://")):
        buildargs["PIP_INDEX_URL"] = index
    return build_image(client, image_tag or tag(variant), context, "docker/Dockerfile", buildargs, verbose)


def build_image(
    client: DockerClient,
    name: str,
    context: io.BytesIO,
    dockerfile: str,
    buildargs: dict[str, str],
    verbose: bool = False,
) -> str:
    """Build ``name`` from ``context``; the image it replaces is removed. Returns the image id."""
    previous = _image_id(client, name)
    log.info(f"building {name} ({len(context.getvalue()) // 1024} KiB context)")
    start = time.monotonic()
    image_id = _stream_build(client, context, name, dockerfile, buildargs, verbose)
    log.info(f"built {name} in {time.monotonic() - start:.0f} s, {image_size(client, name) / 1e9:.2f} GB")
    if previous and previous != _image_id(client, name):
        _remove_superseded(client, previous)
    return image_id


def _image_id(client: DockerClient, name: str) -> str | None:
    from docker.errors import ImageNotFound

    try:
        image_id: str = client.images.get(name).id
        return image_id
    except ImageNotFound:
        return None


def _remove_superseded(client: DockerClient, image_id: str) -> None:
    """Drop the image the new build replaced: untagged, it only fills the disk (GBs per build)."""
    from docker.errors import APIError

    try:
        client.images.remove(image_id, noprune=False)
    except APIError:
        pass  # a container still uses it, or another tag does: Docker keeps it, and so do we


def _stream_build(
    client: DockerClient,
    context: io.BytesIO,
    name: str,
    dockerfile: str,
    buildargs: dict[str, str],
    verbose: bool,
) -> str:
    """Run the classic builder through the API: its whole log when verbose, else one line per
    Dockerfile step (a first build takes minutes); the log's tail goes with an error."""
    tail: list[str] = []
    image_id = ""
    stream = client.api.build(
        fileobj=context,
        custom_context=True,
        dockerfile=dockerfile,
        tag=name,
        buildargs=buildargs,
        rm=True,
        forcerm=True,
        pull=False,
        decode=True,
    )
    for chunk in stream:
        if "error" in chunk:
            log.error("\n".join(tail[-15:]))
            raise ImageError(f"docker build of {name} failed: {chunk['error'].strip()}")
        text = chunk.get("stream", "")
        for line in text.splitlines():
            tail = (tail + [line])[-40:]
            if line.strip() and (verbose or line.startswith("Step ")):
                log.info(line if verbose else f"  {line[:100]}")
        if "aux" in chunk and "ID" in chunk["aux"]:
            image_id = chunk["aux"]["ID"]
    if not image_id:
        log.error("\n".join(tail[-15:]))
        raise ImageError(f"docker build of {name} ended without an image")
    return image_id


def image_size(client: DockerClient, name: str) -> int:
    return int(client.images.get(name).attrs["Size"])


def ensure(variant: str, client: DockerClient) -> str:
    """The variant's image, built first when missing; warns when its lock is older than the repo's."""
    from docker.errors import ImageNotFound

    name = tag(variant)
    try:
        image = client.images.get(name)
    except ImageNotFound:
        log.info(f"jaxcourse: no {name} image yet; building it (a few minutes, once)")
        build(variant, client=client)
        return name
    try:
        repo = find_repo()
    except ImageError:
        return name
    labels = image.labels or {}
    if labels.get("org.jaxcourse.lock-sha256") not in (None, lock_sha256(repo, variant)):
        log.info(
            f"jaxcourse: {name} was built from an older lock; `jaxcourse image build --variant {variant}` updates it"
        )
    return name
