"""A class's grading queue across a Docker Swarm, every part of it a Swarm service: Redis and the
grading service (the one recorder) pinned to the manager, which holds the class directory; the
grading workers on the nodes labelled for grading, as many as ``jaxcourse workers scale`` says,
each starting sandboxes on its own node's engine.

- The queue network is an attachable overlay, internal (no way out), reached by name through
  DNS round robin (``engine/swarm.ENDPOINT_MODE``). It is encrypted where asked; kernels without
  IPsec ESP cannot carry an encrypted overlay, so the queue's own TLS protects the jobs, the
  outcomes and the broker's password on the wire either way.
- Redis's password, the broker's URL (with it), the key outcomes are signed with and the queue's
  CA reach the services as Swarm secrets (files in /run/secrets, carried over the swarm's own
  TLS), never as variables that ``docker service inspect`` would show.
- The manager's services name their images by ID: the engine runs exactly the image built here
  and never asks a registry for it.
- A worker grades on any node that has the course checkout at the same path as the manager, the
  course image loaded, and the label ``jaxcourse.grade=yes`` (docs/swarm.md: adding a node).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from typing import TYPE_CHECKING, Any

from classroom import environment, services, swarm

from . import deploy, swarm_secrets
from .class_tls import ServerTLS, issue
from .images import REDIS_IMAGE

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from docker.client import DockerClient
    from docker.models.services import Service

GRADE_LABEL = "jaxcourse.grade"  # a node label: yes where grading workers may run
TLS_MOUNT = "/etc/jaxcourse/queue-tls"
SECRETS = ("broker", "queue_key", "queue_ca")  # what a worker and the recorder read from /run/secrets
PASSWORD = "redis_password"  # what Redis reads from /run/secrets
READY_S = 120.0  # Redis healthy, from its service made


def tls(deployment: deploy.Deployment) -> ServerTLS:
    return issue(deployment.classdir.root / "secrets" / "queue-tls", "redis", f"{deployment.name}-redis")


def broker(deployment: deploy.Deployment) -> str:
    """The broker's URL over TLS, by Redis's name on the queue network."""
    return deployment.broker().replace("redis://", "rediss://", 1)


def queue_network(client: DockerClient, deployment: deploy.Deployment, encrypted: bool) -> str:
    name = f"{deployment.name}-queue"
    if not client.networks.list(names=[name]):
        options = {"encrypted": ""} if encrypted else {}
        client.networks.create(
            name,
            driver="overlay",
            attachable=True,
            internal=True,
            options=options,
            labels={deploy.LABEL: deployment.name},
        )
    return name


def secret_name(class_name: str, short: str, value: str) -> str:
    """A Swarm secret cannot change, so its name carries its value's digest: a new password (a
    class directory made anew) is a new secret, never a stale one found under the old name."""
    return f"{class_name}-{short}-{hashlib.sha256(value.encode()).hexdigest()[:12]}"


def _secret(client: DockerClient, deployment: deploy.Deployment, short: str, value: str) -> Any:
    """A reference to the class's secret ``short`` holding ``value`` (made the first time the
    value is seen), a file in /run/secrets readable by the class directory's owner only."""
    from docker.types import SecretReference

    name = secret_name(deployment.name, short, value)
    secret = swarm_secrets.named(client, name, value.encode(), {deploy.LABEL: deployment.name})
    return SecretReference(secret.id, name, filename=short, mode=0o400, **_owner_ids(deployment))


def _secrets(client: DockerClient, deployment: deploy.Deployment) -> list[Any]:
    """The queue's secrets, as a worker and the recorder read them."""
    values = {
        "broker": broker(deployment),
        "queue_key": deployment.classdir.secret("queue_key"),
        "queue_ca": tls(deployment).ca.read_text(),
    }
    return [_secret(client, deployment, short, values[short]) for short in SECRETS]


def _prune_secrets(client: DockerClient, deployment: deploy.Deployment) -> None:
    """The class's secrets none of its services names any more (values since replaced); one a
    task still holds while it stops is left to ``hub down``."""
    mine = {"label": f"{deploy.LABEL}={deployment.name}"}
    named = {
        ref["SecretName"]
        for service in client.services.list(filters=mine)
        for ref in service.attrs["Spec"]["TaskTemplate"]["ContainerSpec"].get("Secrets", [])
    }
    swarm_secrets.remove(s for s in client.secrets.list(filters=mine) if s.name not in named)


def worker_reservation(deployment: deploy.Deployment) -> int:
    """Bytes of memory a worker holds its node to: the sandboxes it runs at once (one where the
    node's cores decide), each of the largest assignment's ``memory``, so Swarm places a worker
    only where its sandboxes fit."""
    from docker.utils import parse_bytes

    from autograder.grading.sandbox import limits
    from autograder.specs import ASSIGNMENTS

    largest = max(parse_bytes(limits.load(deployment.checkout.root, name).memory) for name in ASSIGNMENTS)
    return max(1, deployment.settings.worker_concurrency) * int(largest)


def _owner_ids(deployment: deploy.Deployment) -> dict[str, str]:
    stat = deployment.classdir.root.stat()
    return {"uid": str(stat.st_uid), "gid": str(stat.st_gid)}


def _with_secrets(argv: str) -> str:
    """A shell line that puts the queue's secrets into the environment, then runs ``argv``."""
    return (
        f'export {environment.BROKER}="$(cat /run/secrets/broker)" '
        f'{environment.QUEUE_KEY}="$(cat /run/secrets/queue_key)" '
        f"{environment.BROKER_CA}=/run/secrets/queue_ca; exec {argv}"
    )


def _class_service(
    deployment: deploy.Deployment, name: str, image: str, network: str, replicas: int, **spec: Any
) -> dict[str, Any]:
    """``services.create`` keywords every service of the class has: on the queue network, reached
    by DNS round robin, as the class directory's owner with no capability and a read-only root,
    labelled as the class's; then ``spec``."""
    from docker.types import EndpointSpec, ServiceMode

    stat = deployment.classdir.root.stat()
    return {
        "image": image,
        "name": name,
        "networks": [network],
        "user": f"{stat.st_uid}:{stat.st_gid}",
        "cap_drop": ["ALL"],
        "read_only": True,
        "endpoint_spec": EndpointSpec(mode=swarm.ENDPOINT_MODE),
        "mode": ServiceMode("replicated", replicas),
        "labels": deployment.labels,
        "container_labels": deployment.labels,
        **spec,
    }


def on_this_manager(client: DockerClient) -> dict[str, Any]:
    """Placement on this engine's node, which holds the class directory; restarted whenever it stops."""
    from docker.types import RestartPolicy

    return {
        "constraints": [f"node.id=={client.info()['Swarm']['NodeID']}"],
        "restart_policy": RestartPolicy(condition="any", delay=1_000_000_000),
    }


def redis_service(client: DockerClient, deployment: deploy.Deployment, network: str) -> dict[str, Any]:
    """Redis on this manager, its port speaking TLS only with the class's certificate, its
    append-only file in the class directory, its password a secret."""
    from docker.types import Mount

    data = deployment.classdir.root / "redis"
    password = _secret(client, deployment, PASSWORD, deployment.classdir.secret("redis_password"))
    return _class_service(
        deployment,
        f"{deployment.name}-redis",
        client.images.get(REDIS_IMAGE).id,
        network,
        1,
        env=[f"REDIS_TLS_DIR={TLS_MOUNT}", f"REDIS_PASSWORD_FILE=/run/secrets/{PASSWORD}"],
        mounts=[
            Mount("/data", str(data), type="bind"),
            Mount(TLS_MOUNT, str(tls(deployment).folder), type="bind", read_only=True),
            Mount("/tmp", None, type="tmpfs"),
        ],
        secrets=[password],
        **on_this_manager(client),
    )


def recorder_service(client: DockerClient, deployment: deploy.Deployment, image: str, network: str) -> dict[str, Any]:
    """The grading service (the class's one recorder) on this manager, writing the class
    directory, speaking TLS to Redis."""
    from docker.types import Healthcheck, Mount

    checkout, root = str(deployment.checkout.root), str(deployment.classdir.root)
    return _class_service(
        deployment,
        f"{deployment.name}-grading",
        client.images.get(image).id,
        network,
        1,
        command=["tini", "-g", "--", "sh", "-c", _with_secrets(services.GRADING)],
        env=["HOME=/tmp", f"{environment.ROOT}={checkout}", f"{environment.CLASS_DIR}={root}", "PYTHONUNBUFFERED=1"],
        mounts=[
            Mount(checkout, checkout, type="bind", read_only=True),
            Mount(root, root, type="bind"),
            Mount("/tmp", None, type="tmpfs"),
        ],
        secrets=_secrets(client, deployment),
        **on_this_manager(client),
        healthcheck=Healthcheck(test=["NONE"]),  # the image's probe is for JupyterLab, which it does not run
    )


def worker_service(
    client: DockerClient,
    deployment: deploy.Deployment,
    image: str,
    network: str,
    replicas: int,
    sandbox_image: str | None = None,
) -> dict[str, Any]:
    """``services.create`` keywords for the class's grading workers."""
    from docker.types import Healthcheck, Mount, Resources, RestartPolicy

    checkout = str(deployment.checkout.root)
    scratch = f"{swarm.SCRATCH}/{deployment.name}-{{{{.Node.Hostname}}}}-{{{{.Task.Slot}}}}"
    argv = f'jaxcourse worker --course {checkout} --cache "$TMPDIR/cache" --sandbox docker'
    argv += f" --concurrency {deployment.settings.worker_concurrency}" if deployment.settings.worker_concurrency else ""
    argv += f" --image {sandbox_image}" if sandbox_image else ""
    return _class_service(
        deployment,
        f"{deployment.name}-workers",
        image,
        network,
        replicas,
        command=["tini", "-g", "--", "sh", "-c", f'mkdir -p "$TMPDIR" && {_with_secrets(argv)}'],
        hostname="{{.Node.Hostname}}-worker-{{.Task.Slot}}",
        env=["HOME=/tmp", f"TMPDIR={scratch}", f"{environment.ROOT}={checkout}", "PYTHONUNBUFFERED=1"],
        mounts=[
            Mount(deploy.SOCKET, deploy.SOCKET, type="bind"),
            Mount(checkout, checkout, type="bind", read_only=True),
            Mount(swarm.SCRATCH, swarm.SCRATCH, type="bind"),
            Mount("/tmp", None, type="tmpfs"),
        ],
        groups=[str(os.stat(deploy.SOCKET).st_gid)],
        secrets=_secrets(client, deployment),
        constraints=[f"node.labels.{GRADE_LABEL}==yes"],
        resources=Resources(mem_reservation=worker_reservation(deployment)),
        restart_policy=RestartPolicy(condition="on-failure", delay=1_000_000_000),  # a refused worker stays down
        healthcheck=Healthcheck(test=["NONE"]),  # the image's probe is for JupyterLab: Swarm would kill them
    )


def manager_address(client: DockerClient) -> str:
    """This engine's address in the swarm it manages; a ``HubError`` that says what to run where
    it manages none."""
    info = client.info()["Swarm"]
    if not info.get("ControlAvailable"):
        raise deploy.HubError(
            "--swarm needs this engine to be a swarm manager: run `docker swarm init "
            "--advertise-addr ADDRESS` here first (docs/swarm.md)"
        )
    address: str = info["NodeAddr"]
    return address


def start(client: DockerClient, deployment: deploy.Deployment, images: deploy.ClassImages) -> None:
    """``hub up --swarm``'s queue: Redis and the grading service on this manager, the workers on
    the grading nodes, running the grading image by the name the nodes pull it by."""
    manager_address(client)
    encrypted = swarm.esp_available()
    if not encrypted:
        log.info(
            "the queue network is not encrypted: this kernel has no IPsec ESP (CONFIG_INET_ESP); the queue's own "
            "TLS still protects it"
        )
    network = queue_network(client, deployment, encrypted)
    (deployment.classdir.root / "redis").mkdir(exist_ok=True)  # a service's bind mount must exist
    redis = ensure(client, redis_service(client, deployment, network))
    _wait_healthy(client, redis.name)
    ensure(client, recorder_service(client, deployment, images.grading, network))
    on_nodes = images.for_nodes(images.grading)
    replicas = workers(client, deployment, on_nodes, network, sandbox_image=on_nodes)
    _prune_secrets(client, deployment)
    log.info(f"{deployment.name}-workers: {replicas} workers on the nodes labelled {GRADE_LABEL}=yes")


def ensure(client: DockerClient, spec: dict[str, Any]) -> Service:
    """The service ``spec`` names, running ``spec``: made; updated in place where it runs from
    another spec (a new image, a new secret); else left alone. An update restarts every task (the
    engine fills in its defaults on the first), so a change is told by the spec's digest, in a
    label; the scale (``workers scale``) is not part of it."""
    spec = deploy.stamped(spec, leave_out=("mode",))
    service = _service(client, spec["name"])
    if service is None:
        made: Service = client.services.create(**spec)
        log.info(f"{spec['name']}: a service, started")
        return made
    if deploy.runs_from(service.attrs["Spec"].get("Labels"), spec):
        log.info(f"{spec['name']}: a service, already running")
        return service
    service.update(**spec)
    log.info(f"{spec['name']}: a service, updated")
    return service


def _wait_healthy(client: DockerClient, service: str) -> None:
    """A task of ``service`` on this engine passes its health check within ``READY_S`` seconds:
    any task, not one container (engine.health's way), since Swarm replaces a task that exits."""
    deadline = time.monotonic() + READY_S
    label = f"com.docker.swarm.service.name={service}"
    while not client.containers.list(filters={"label": label, "health": "healthy"}):
        if time.monotonic() > deadline:
            raise deploy.HubError(
                f"{service} was not healthy after {READY_S:g} s: `docker service ps --no-trunc {service}` says why"
            )
        time.sleep(0.5)


def rescale(client: DockerClient, deployment: deploy.Deployment, replicas: int) -> Service:
    """``jaxcourse workers scale``: the running class's workers, now ``replicas`` of them."""
    if not client.info()["Swarm"].get("ControlAvailable"):
        raise deploy.HubError("this engine is not a swarm manager: run `jaxcourse workers scale` on the manager")
    name = f"{deployment.name}-workers"
    service = _service(client, name)
    if service is None:
        raise deploy.HubError(f"no workers' service {name}: start the class with `jaxcourse hub up --swarm` first")
    service.scale(replicas)
    return service


def workers(
    client: DockerClient, deployment: deploy.Deployment, image: str, network: str, sandbox_image: str | None = None
) -> int:
    """The workers' service running this spec (a new image, a new secret): made with ``[hub]
    workers`` tasks the first time, after that updated in place at the scale it has; how many."""
    name = f"{deployment.name}-workers"
    service = _service(client, name)
    replicas = (
        deployment.settings.workers if service is None else service.attrs["Spec"]["Mode"]["Replicated"]["Replicas"]
    )
    ensure(client, worker_service(client, deployment, image, network, replicas, sandbox_image))
    return int(replicas)


def _service(client: DockerClient, name: str) -> Service | None:
    """The service called exactly ``name`` (Docker's filter also matches names that contain it)."""
    return next((s for s in client.services.list(filters={"name": name}) if s.name == name), None)
