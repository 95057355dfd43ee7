"""A class's grading queue across a Docker Swarm: Redis on the manager, speaking TLS; the grading
workers a Swarm service on the nodes labelled for grading, as many as ``jaxcourse workers scale``
says, each starting sandboxes on its own node's engine.

- The queue network is an attachable overlay, internal (no way out), reached by name through
  DNS round robin (``engine/swarm.ENDPOINT_MODE``). It is encrypted where asked; kernels without
  IPsec ESP cannot carry an encrypted overlay, so the queue's own TLS protects the jobs, the
  outcomes and the broker's password on the wire either way.
- The broker's URL (with its password), the key outcomes are signed with and the queue's CA reach
  workers as Swarm secrets (files in /run/secrets, carried over the swarm's own TLS), never as
  variables that ``docker service inspect`` would show.
- A worker grades on any node that has the course checkout at the same path as the manager, the
  course image loaded, and the label ``jaxcourse.grade=yes`` (README: adding a node).
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any

from ..core import environment
from ..engine import swarm
from . import deploy
from .class_tls import ServerTLS, issue

if TYPE_CHECKING:
    from docker.client import DockerClient
    from docker.models.services import Service

GRADE_LABEL = "jaxcourse.grade"  # a node label: yes where grading workers may run
TLS_MOUNT = "/etc/jaxcourse/queue-tls"
SECRETS = ("broker", "queue_key", "queue_ca")  # what a worker reads from /run/secrets


def tls(deployment: deploy.Deployment) -> ServerTLS:
    return issue(deployment.classdir.root / "secrets" / "queue-tls", "redis", f"{deployment.name}-redis")


def broker(deployment: deploy.Deployment) -> str:
    """The broker's URL over TLS, by Redis's name on the queue network."""
    return deployment.broker().replace("redis://", "rediss://", 1)


def queue_network(client: DockerClient, deployment: deploy.Deployment, encrypted: bool) -> str:
    name = f"{deployment.name}-queue"
    if not client.networks.list(names=[name]):
        options = {"encrypted": ""} if encrypted else {}
        client.networks.create(name, driver="overlay", attachable=True, internal=True, options=options,
                               labels={deploy.LABEL: deployment.name})  # fmt: skip
    return name


def redis_options(deployment: deploy.Deployment, network: str) -> dict[str, Any]:
    """Redis as on one host, its port speaking TLS only, with the class's certificate."""
    options = deploy.redis_options(deployment, network)
    options["environment"]["REDIS_TLS_DIR"] = TLS_MOUNT
    options["volumes"][str(tls(deployment).folder)] = {"bind": TLS_MOUNT, "mode": "ro"}
    return options


def recorder_options(deployment: deploy.Deployment, image: str, network: str) -> dict[str, Any]:
    """The grading service (the class's one recorder), speaking TLS to Redis."""
    options = deploy.grading_options(deployment, image, network)
    options["environment"][environment.BROKER] = broker(deployment)
    options["environment"][environment.BROKER_CA] = f"{TLS_MOUNT}/ca.pem"
    options["volumes"][str(tls(deployment).folder)] = {"bind": TLS_MOUNT, "mode": "ro"}
    return options


def secret_name(class_name: str, short: str, value: str) -> str:
    """A Swarm secret cannot change, so its name carries its value's digest: a new password (a
    class directory made anew) is a new secret, never a stale one found under the old name."""
    return f"{class_name}-{short}-{hashlib.sha256(value.encode()).hexdigest()[:12]}"


def _secrets(client: DockerClient, deployment: deploy.Deployment) -> list[Any]:
    """The worker's secrets, each made the first time its value is seen."""
    from docker.types import SecretReference

    values = {"broker": broker(deployment), "queue_key": deployment.classdir.secret("queue_key"),
              "queue_ca": tls(deployment).ca.read_text()}  # fmt: skip
    refs = []
    for short in SECRETS:
        name = secret_name(deployment.name, short, values[short])
        found = client.secrets.list(filters={"name": name})
        secret = next((s for s in found if s.name == name), None) or client.secrets.create(
            name=name, data=values[short].encode(), labels={deploy.LABEL: deployment.name}
        )
        refs.append(SecretReference(secret.id, name, filename=short, mode=0o400, **_owner_ids(deployment)))
    return refs


def _prune_secrets(client: DockerClient, deployment: deploy.Deployment, kept: list[Any]) -> None:
    """The class's secrets the workers' service no longer names (values since replaced); one a
    task still holds while it stops is left to ``hub down``."""
    from docker.errors import APIError

    names = {ref["SecretName"] for ref in kept}
    for secret in client.secrets.list(filters={"label": f"{deploy.LABEL}={deployment.name}"}):
        if secret.name not in names:
            try:
                secret.remove()
            except APIError:
                pass


def worker_reservation(deployment: deploy.Deployment) -> int:
    """Bytes of memory a worker holds its node to: the sandboxes it runs at once (one where the
    node's cores decide), each of the largest assignment's ``memory``, so Swarm places a worker
    only where its sandboxes fit."""
    from docker.utils import parse_bytes

    from ..grading import limits
    from ..specs import ASSIGNMENTS

    largest = max(parse_bytes(limits.load(deployment.checkout.root, name).memory) for name in ASSIGNMENTS)
    return max(1, deployment.settings.worker_concurrency) * int(largest)


def _owner_ids(deployment: deploy.Deployment) -> dict[str, str]:
    stat = deployment.classdir.root.stat()
    return {"uid": str(stat.st_uid), "gid": str(stat.st_gid)}


def _worker_script(deployment: deploy.Deployment, sandbox_image: str | None) -> str:
    """The worker's shell: its secrets into its environment, its scratch folder made, then run."""
    argv = f'jaxcourse worker --course {deployment.checkout.root} --cache "$TMPDIR/cache" --sandbox docker'
    argv += f" --concurrency {deployment.settings.worker_concurrency}" if deployment.settings.worker_concurrency else ""
    argv += f" --image {sandbox_image}" if sandbox_image else ""
    return (f'export {environment.BROKER}="$(cat /run/secrets/broker)" '
            f'{environment.QUEUE_KEY}="$(cat /run/secrets/queue_key)" '
            f'{environment.BROKER_CA}=/run/secrets/queue_ca; mkdir -p "$TMPDIR" && exec {argv}')  # fmt: skip


def worker_service(client: DockerClient, deployment: deploy.Deployment, image: str, network: str,
                   replicas: int, sandbox_image: str | None = None) -> dict[str, Any]:  # fmt: skip
    """``services.create`` keywords for the class's grading workers."""
    from docker.types import EndpointSpec, Healthcheck, Mount, Resources, RestartPolicy, ServiceMode

    checkout = str(deployment.checkout.root)
    stat = deployment.classdir.root.stat()
    scratch = f"{swarm.SCRATCH}/{deployment.name}-{{{{.Node.Hostname}}}}-{{{{.Task.Slot}}}}"
    return {
        "image": image, "name": f"{deployment.name}-workers", "networks": [network],
        "command": ["tini", "-g", "--", "sh", "-c", _worker_script(deployment, sandbox_image)],
        "hostname": "{{.Node.Hostname}}-worker-{{.Task.Slot}}",
        "env": ["HOME=/tmp", f"TMPDIR={scratch}", f"{environment.ROOT}={checkout}", "PYTHONUNBUFFERED=1"],
        "mounts": [Mount(deploy.SOCKET, deploy.SOCKET, type="bind"),
                   Mount(checkout, checkout, type="bind", read_only=True),
                   Mount(swarm.SCRATCH, swarm.SCRATCH, type="bind"),
                   Mount("/tmp", None, type="tmpfs")],
        "user": f"{stat.st_uid}:{stat.st_gid}", "groups": [str(os.stat(deploy.SOCKET).st_gid)],
        "cap_drop": ["ALL"], "read_only": True, "secrets": _secrets(client, deployment),
        "constraints": [f"node.labels.{GRADE_LABEL}==yes"],
        "resources": Resources(mem_reservation=worker_reservation(deployment)),
        "endpoint_spec": EndpointSpec(mode=swarm.ENDPOINT_MODE), "mode": ServiceMode("replicated", replicas),
        "restart_policy": RestartPolicy(condition="on-failure", delay=1_000_000_000),  # a refused worker stays down
        "labels": deployment.labels, "container_labels": deployment.labels,
        "healthcheck": Healthcheck(test=["NONE"]),  # the image's probe is for JupyterLab: Swarm would kill them
    }  # fmt: skip


def manager_address(client: DockerClient) -> str:
    """This engine's address in the swarm it manages; a ``HubError`` that says what to run where
    it manages none."""
    info = client.info()["Swarm"]
    if not info.get("ControlAvailable"):
        raise deploy.HubError("--swarm needs this engine to be a swarm manager: run `docker swarm init "
                              "--advertise-addr ADDRESS` here first (README: a class on several machines)")  # fmt: skip
    address: str = info["NodeAddr"]
    return address


def start(client: DockerClient, deployment: deploy.Deployment, images: deploy.ClassImages, say: deploy.Say) -> None:
    """``hub up --swarm``'s queue: Redis and the grading service on this manager, the workers on
    the grading nodes, running the grading image by the name the nodes pull it by."""
    manager_address(client)
    encrypted = swarm.esp_available()
    if not encrypted:
        say("the queue network is not encrypted: this kernel has no IPsec ESP (CONFIG_INET_ESP); the queue's own "
            "TLS still protects it")  # fmt: skip
    network = queue_network(client, deployment, encrypted)
    deploy.start(client, say, f"{deployment.name}-redis", deploy.wait_healthy, **redis_options(deployment, network))
    deploy.start(client, say, f"{deployment.name}-grading", None,
                 **recorder_options(deployment, images.grading, network))  # fmt: skip
    on_nodes = images.for_nodes(images.grading)
    replicas = workers(client, deployment, on_nodes, network, sandbox_image=on_nodes)
    say(f"{deployment.name}-workers: {replicas} workers on the nodes labelled {GRADE_LABEL}=yes")


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


def workers(client: DockerClient, deployment: deploy.Deployment, image: str, network: str,
            sandbox_image: str | None = None) -> int:  # fmt: skip
    """The workers' service running this spec (a new image, a new secret): made with ``[hub]
    workers`` tasks the first time, after that updated in place at the scale it has; how many."""
    name = f"{deployment.name}-workers"
    service = _service(client, name)
    replicas = (
        deployment.settings.workers if service is None else service.attrs["Spec"]["Mode"]["Replicated"]["Replicas"]
    )
    spec = worker_service(client, deployment, image, network, replicas, sandbox_image)
    if service is None:
        client.services.create(**spec)
    else:
        service.update(**spec)
    _prune_secrets(client, deployment, spec["secrets"])
    return int(replicas)


def _service(client: DockerClient, name: str) -> Service | None:
    """The service called exactly ``name`` (Docker's filter also matches names that contain it)."""
    return next((s for s in client.services.list(filters={"name": name}) if s.name == name), None)
