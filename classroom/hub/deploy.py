"""``jaxcourse hub up``: a class on this Docker host (``teardown.py`` takes it down).

Networks and four kinds of container, all named after the class (``jaxcourse-<class>``):

    <name>-hub       JupyterHub and its proxy; the proxy's port is the only one published, on
                     127.0.0.1 unless told otherwise; on the hub network, and on every server's
    <name>-lab-<u>   each user's server (spawned by the hub), alone on its own internal network
                     <name>-lab-<u>-net with the hub's container (``hub/networks.py``)
    <name>-redis     the grading queue, on the queue network only (internal: no way out, never published)
    <name>-grading   the grading service (the one recorder), on the queue network only
    <name>-worker-N  grading workers, on the queue network only, each with the Docker engine

A student's server can reach the hub's container (its API, the proxy, the exchange) and nothing
else: not the host, a classmate's server, the queue, the grading service or a worker. State lives in the class directory (``delivery/classdir.py``): ``up`` again after
``down``, a reboot or an upgrade finds every student's work, submission and grade where it was.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.core.config import CONFIG
from autograder.core.course import Course
from autograder.core.errors import JaxcourseError
from autograder.engine import containers, health, images
from classroom import environment, roster, services
from classroom.classdir import ClassDir

from . import networks
from .images import HUB_IMAGE, REDIS_IMAGE, build_hub, build_redis
from .settings import HubSettings
from .settings import load as load_settings

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from docker.client import DockerClient
    from docker.models.containers import Container

SOCKET = "/var/run/docker.sock"
# The class's name on this machine: browsers find every *.localhost here, and a name with a dot in
# it takes the cookie JupyterHub shares with its users' subdomains (a bare "localhost" would not).
LOCAL_DOMAIN = "jaxcourse.localhost"
READY_S = 180.0
LABEL = "jaxcourse.class"  # value: the class's name, on every container, network and volume it owns
DIR_LABEL = "jaxcourse.class-dir"  # value: the class directory a container serves
OPTIONS_LABEL = "jaxcourse.options"  # value: the digest of what a renewable container or a service runs from


class HubError(JaxcourseError):
    """The class cannot be started or stopped: the message says what to do."""


@dataclass(frozen=True)
class Deployment:
    classdir: ClassDir
    checkout: Course
    variant: str = "cpu"
    host: str = "127.0.0.1"
    port: int = 8000
    tls: tuple[Path, Path] | None = None  # (certificate, key) the proxy serves HTTPS with
    domain: str | None = None  # what students type; each user's server is at <user>.<domain>

    @property
    def name(self) -> str:
        slug = re.sub(r"[^a-z0-9-]+", "-", self.classdir.root.name.lower()).strip("-") or "class"
        return f"jaxcourse-{slug}"

    @property
    def settings(self) -> HubSettings:
        return load_settings(self.checkout.root)

    def broker(self) -> str:
        return f"redis://:{self.classdir.secret('redis_password')}@{self.name}-redis:6379/0"

    @property
    def url(self) -> str:
        """Where students go: each user's server on a subdomain of it, an origin of its own."""
        return f"{'https' if self.tls else 'http'}://{self.domain or LOCAL_DOMAIN}:{self.port}"

    def check_published(self) -> None:
        """Beyond this machine, the proxy must speak HTTPS: passwords and tokens cross the network."""
        if self.tls is None and not _loopback(self.host):
            raise HubError(
                f"publishing the class on {self.host} needs TLS: pass --tls-cert and --tls-key (a "
                "certificate for the name students use), or keep 127.0.0.1 behind a TLS reverse proxy"
            )
        if self.domain is None and not _loopback(self.host):
            raise HubError(
                f"publishing the class on {self.host} needs --domain NAME: the name students type, whose "
                "every subdomain (*.NAME) reaches this machine, since each user's server is at <user>.NAME"
            )
        for path in self.tls or ():
            if not path.is_file():
                raise HubError(f"no TLS file at {path}: --tls-cert and --tls-key take a PEM certificate and its key")

    @property
    def labels(self) -> dict[str, str]:
        return {LABEL: self.name, DIR_LABEL: str(self.classdir.root)}


@dataclass(frozen=True)
class ClassImages:
    """The images a class runs, as this host's engine names them, and where other hosts' engines
    run them, the name each pulls them by (none on one host)."""

    student: str
    grading: str
    on_nodes: dict[str, str] = field(default_factory=dict)

    def for_nodes(self, image: str) -> str:
        return self.on_nodes.get(image, image)


@dataclass(frozen=True)
class Placement:
    """Where a class's parts run: on this host (``ON_THIS_HOST``), or across a swarm
    (``hub/swarm_class.py``). ``publish`` makes the images reachable where they run (their names
    there, by name here); ``start_queue`` starts Redis, the grading service and the workers;
    ``prepare_hub`` starts what the hub needs besides, and returns the hub's extra environment."""

    publish: Callable[[DockerClient, Deployment, list[str]], dict[str, str]]
    start_queue: Callable[[DockerClient, Deployment, ClassImages], None]
    prepare_hub: Callable[[DockerClient, Deployment, ClassImages], dict[str, str]]


# ---- up --------------------------------------------------------------------------------------


def up(deployment: Deployment, roster_file: Path | None, placement: Placement | None = None) -> None:
    """Start (or complete) the class, on this host unless ``placement`` says otherwise; what
    already runs is left running."""
    deployment.check_published()
    members = roster.read(roster_file) if roster_file is not None else None
    hub_dir = deployment.classdir.root / "hub"
    if members is None and not (hub_dir / "roster.json").is_file():
        raise HubError(f"no roster installed in {deployment.classdir.root}: run `jaxcourse hub up --roster FILE` once")
    client = images.connect()
    classdir = deployment.classdir.init(deployment.checkout)
    if members is not None:
        issued = roster.install(members, hub_dir, classdir.root / "secrets")
        log.info(f"roster: {roster_file} installed; passwords for the class are in {issued}")
    student_image = images.ensure(deployment.variant, client)
    grading_image = images.ensure("cpu", client)
    repo = source_repo()
    build_redis(client, repo)
    build_hub(client, repo)
    hub_net = _network(client, f"{deployment.name}-hub", deployment.name, internal=False)
    place = placement or ON_THIS_HOST
    on_nodes = place.publish(client, deployment, sorted({student_image, grading_image}))
    class_images = ClassImages(student_image, grading_image, on_nodes)
    place.start_queue(client, deployment, class_images)
    extra = place.prepare_hub(client, deployment, class_images)
    start(client, f"{deployment.name}-hub", wait_healthy, **hub_options(deployment, student_image, hub_net, extra))
    _rejoin(client, deployment)
    log.info(
        f"the class is up at {deployment.url}/ (state in {classdir.root}); release an assignment with "
        f"`jaxcourse release A --class {classdir.root}`"
    )


def _queue(client: DockerClient, deployment: Deployment, class_images: ClassImages) -> None:
    """Redis, the grading service and the workers, on this host's internal queue network."""
    image = class_images.grading
    queue_net = _network(client, f"{deployment.name}-queue", deployment.name, internal=True)
    start(client, f"{deployment.name}-redis", wait_healthy, **redis_options(deployment, queue_net))
    start(client, f"{deployment.name}-grading", None, **grading_options(deployment, image, queue_net))
    for number in range(1, deployment.settings.workers + 1):
        start(
            client,
            f"{deployment.name}-worker-{number}",
            None,
            **worker_options(deployment, image, queue_net, number),
        )


ON_THIS_HOST = Placement(lambda client, deployment, images: {}, _queue, lambda client, deployment, images: {})


def _loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve anywhere
        return False


def source_repo() -> Path:
    """The checkout this package runs from, whose docker/ folder holds the services' recipes."""
    here = Path(__file__).resolve().parents[2]
    return here if (here / "docker" / "hub" / "Dockerfile").is_file() else images.find_repo()


def _rejoin(client: DockerClient, deployment: Deployment) -> None:
    """A hub container made anew (its old one had gone) joins the networks of the servers that
    still run, so that they are in its reach again (``hub/networks.py``)."""
    hub = f"{deployment.name}-hub"
    for network in client.networks.list(filters={"label": [f"{LABEL}={deployment.name}", networks.USER_LABEL]}):
        if not networks.has(network, hub):
            network.connect(hub)


def _network(client: DockerClient, name: str, owner: str, internal: bool) -> str:
    if not client.networks.list(names=[name]):
        client.networks.create(name, driver="bridge", internal=internal, labels={LABEL: owner})
    return name


def start(
    client: DockerClient,
    name: str,
    ready: Callable[[Container], None] | None,
    renew: bool = False,
    **options: Any,
) -> None:
    """The container ``name`` running from ``options``, unless it already runs for this class;
    with ``renew``, one that runs from other options (an address that moved) is replaced."""
    from docker.errors import NotFound

    if renew:
        options = stamped(options)
    try:
        existing = client.containers.get(name)
        serves = (existing.labels or {}).get(DIR_LABEL)
        if serves != options["labels"][DIR_LABEL]:
            raise HubError(
                f"{name} already serves the class in {serves}: give this class directory another name, "
                f"or stop that class first (`jaxcourse hub down --class {serves}`)"
            )
        if existing.status == "running" and runs_from(existing.labels, options):
            log.info(f"{name}: already running")
            return
        existing.remove(force=True)
    except NotFound:
        pass
    try:
        container = containers.started(client, name=name, restart_policy={"Name": "unless-stopped"}, **options)
    except containers.PortHeld as held:
        raise HubError(f"{name}: {held} is held by something else; stop it, or use `jaxcourse hub up --port`") from None
    if ready is not None:
        ready(container)
    log.info(f"{name}: started")


def stamped(options: dict[str, Any], leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    """``options`` (a container's or a service's) with the digest of what they run from, less
    ``leave_out``, in a label, so that ``up`` again can tell whether what runs is to be replaced."""
    kept = {key: value for key, value in options.items() if key not in leave_out}
    digest = hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()
    return {**options, "labels": {**options["labels"], OPTIONS_LABEL: digest}}


def runs_from(labels: dict[str, str] | None, options: dict[str, Any]) -> bool:
    """Whether what carries ``labels`` was started from ``options`` (both stamped, or neither)."""
    wanted: str | None = options["labels"].get(OPTIONS_LABEL)
    return (labels or {}).get(OPTIONS_LABEL) == wanted


def wait_healthy(container: Container) -> None:
    try:
        health.wait_healthy(container, READY_S)
    except health.Unhealthy as err:
        raise HubError(str(err)) from None


def owner(deployment: Deployment) -> dict[str, Any]:
    """Containers that write class state run as the user who owns the class directory."""
    stat = deployment.classdir.root.stat()
    return {"user": f"{stat.st_uid}:{stat.st_gid}", "labels": deployment.labels}


def locked_down() -> dict[str, Any]:
    return {
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "read_only": True,
        "tmpfs": {"/tmp": "size=512m,mode=1777"},
    }


def redis_options(deployment: Deployment, network: str) -> dict[str, Any]:
    data = deployment.classdir.root / "redis"
    return {
        "image": REDIS_IMAGE,
        "network": network,
        "environment": {"REDIS_PASSWORD": deployment.classdir.secret("redis_password")},
        "volumes": {str(data): {"bind": "/data", "mode": "rw"}},
        **owner(deployment),
        **locked_down(),
    }


def _python_service(deployment: Deployment, image: str, network: str, argv: list[str]) -> dict[str, Any]:
    checkout = str(deployment.checkout.root)
    return {
        "image": image,
        "network": network,
        "entrypoint": ["tini", "-g", "--", *argv],
        "command": [],
        "environment": {
            "HOME": "/tmp",
            environment.ROOT: checkout,
            environment.CLASS_DIR: str(deployment.classdir.root),
            environment.BROKER: deployment.broker(),
            environment.QUEUE_KEY: deployment.classdir.secret("queue_key"),
            "PYTHONUNBUFFERED": "1",
        },
        "volumes": {checkout: {"bind": checkout, "mode": "ro"}},
        **owner(deployment),
        **locked_down(),
        "healthcheck": {"test": ["NONE"]},  # the image's probe is for JupyterLab, which these do not run
    }


def grading_options(deployment: Deployment, image: str, network: str) -> dict[str, Any]:
    options = _python_service(deployment, image, network, [services.GRADING])
    root = str(deployment.classdir.root)
    options["volumes"][root] = {"bind": root, "mode": "rw"}
    return options


def worker_options(
    deployment: Deployment, image: str, network: str, number: int, sandbox_image: str | None = None
) -> dict[str, Any]:
    """A worker starts sandboxes on this host's engine: its scratch folder has the same path in
    the worker and on the host, so the engine finds what the worker mounts for a sandbox."""
    scratch = deployment.classdir.root / "work" / f"worker-{number}"
    scratch.mkdir(parents=True, exist_ok=True)
    concurrency = deployment.settings.worker_concurrency
    # The broker's URL, with its password, comes in the environment: `ps` shows the command line.
    argv = [
        "jaxcourse",
        "worker",
        "--course",
        str(deployment.checkout.root),
        "--cache",
        str(scratch / "cache"),
        "--sandbox",
        "docker",
    ]
    argv += ["--concurrency", str(concurrency)] if concurrency else []
    argv += ["--image", sandbox_image] if sandbox_image else []
    options = _python_service(deployment, image, network, argv)
    options["environment"]["TMPDIR"] = str(scratch)
    options["volumes"][str(scratch)] = {"bind": str(scratch), "mode": "rw"}
    options["volumes"][SOCKET] = {"bind": SOCKET, "mode": "rw"}
    options["group_add"] = [str(os.stat(SOCKET).st_gid)]
    return options


def hub_options(
    deployment: Deployment, student_image: str, network: str, extra_env: dict[str, str] | None = None
) -> dict[str, Any]:
    root, settings = str(deployment.classdir.root), deployment.settings
    volumes = {SOCKET: {"bind": SOCKET, "mode": "rw"}, root: {"bind": root, "mode": "rw"}}
    config = deployment.checkout.root / CONFIG
    if config.is_file():
        volumes[str(config)] = {"bind": f"/etc/jaxcourse/{CONFIG}", "mode": "ro"}
    for path, name in zip(deployment.tls or (), ("cert.pem", "key.pem")):
        volumes[str(path.resolve())] = {"bind": f"/etc/jaxcourse/tls/{name}", "mode": "ro"}
    return {
        "image": HUB_IMAGE,
        "network": network,
        "ports": {"8000/tcp": (deployment.host, deployment.port)},
        "mem_limit": settings.hub_memory,
        "memswap_limit": settings.hub_memory,
        "working_dir": f"{root}/hub",
        "volumes": volumes,
        "labels": deployment.labels,
        "environment": {
            environment.CLASS_DIR: root,
            environment.HUB_NAME: f"{deployment.name}-hub",
            environment.NETWORK: network,
            environment.IMAGE: student_image,
            environment.PREFIX: f"{deployment.name}-lab",
            environment.COURSE_ROOT: str(deployment.checkout.root),
            environment.MEM_LIMIT: settings.memory,
            environment.MEM_RESERVED: settings.memory_reserved,
            environment.CPU_LIMIT: str(settings.cpus),
            environment.PIDS_LIMIT: str(settings.pids),
            environment.IDLE_TIMEOUT: str(settings.idle_timeout),
            environment.CLASS_NAME: deployment.name,
            environment.SERVER_SUBNETS: settings.server_subnets,
            environment.PUBLIC_URL: deployment.url,
            environment.WORK_QUOTA: settings.work_quota,
            environment.QUOTA_EVERY: str(settings.quota_every),
            environment.SCRATCH: settings.scratch,
            **(extra_env or {}),
        },
    }
