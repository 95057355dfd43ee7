"""A container's life, in one place: started, then stopped and removed however the block that
uses it ends (a return, an exception, Ctrl-C). The sandbox, the lab and the tests all hold their
containers this way, so none is left behind."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docker.client import DockerClient
    from docker.models.containers import Container

TRIES = 10  # an engine busy tearing down a thousand forked processes may ask us to come back


@contextlib.contextmanager
def removed_after(container: Container, stop_timeout: float | None = None) -> Iterator[Container]:
    """``container``, stopped (given ``stop_timeout`` seconds to exit, when asked) and removed
    when the block ends."""
    try:
        yield container
    finally:
        try:
            if stop_timeout is not None:
                container.stop(timeout=stop_timeout)
        finally:
            remove(container)


@contextlib.contextmanager
def running(client: DockerClient, stop_timeout: float | None = None, **options: Any) -> Iterator[Container]:
    """A new container from ``options``, ``started``, and removed after."""
    with removed_after(started(client, **options), stop_timeout) as container:
        yield container


def started(client: DockerClient, **options: Any) -> Container:
    """A new container from ``options`` (docker-py's ``containers.create``), started; removed
    where the engine made it but could not start it, which docker-py's ``containers.run`` leaves
    (``PortHeld`` where a port it publishes was the reason)."""
    container = client.containers.create(**options)
    try:
        container.start()
    except BaseException as err:
        remove(container)
        text = str(getattr(err, "explanation", None) or err)
        if "port is already allocated" in text or "address already in use" in text:
            raise PortHeld(", ".join(_addresses(options.get("ports") or {}))) from err
        raise
    return container


def host_port(container: Container, port: str) -> int:
    """The host port the engine chose for the container's ``port`` (``"8888/tcp"``), published
    to ``None``: what a client on the host connects to."""
    container.reload()
    return int(container.attrs["NetworkSettings"]["Ports"][port][0]["HostPort"])


def _addresses(ports: dict[str, Any]) -> Iterator[str]:
    """Each host address in docker-py's ``ports`` option, which takes a port, a ``(host, port)``
    pair, or a list of either for one container port."""
    for published in ports.values():
        for at in published if isinstance(published, list) else [published]:
            yield ":".join(map(str, at)) if isinstance(at, tuple) else f"0.0.0.0:{at}"


class PortHeld(Exception):
    """A start the engine refused because a port the container publishes is held, by another
    container (the engine's allocator) or a process on the host (its proxy's bind): the lab and
    the hub say which, and what to do, in one line. Its text is the addresses asked for."""


def kill(container: Container) -> None:
    """SIGKILL, and wait for it to take."""
    import docker.errors

    for _ in range(TRIES):
        try:
            container.kill()
            return
        except docker.errors.NotFound:
            return
        except docker.errors.APIError:
            time.sleep(1.0)
            container.reload()
            if container.status != "running":
                return


def remove(container: Container) -> None:
    """Remove, forcibly; a container that is still being killed is tried again."""
    import docker.errors

    for _ in range(TRIES):
        try:
            container.remove(force=True)
            return
        except docker.errors.NotFound:
            return
        except docker.errors.APIError:
            time.sleep(1.0)  # still being killed; the next grading run clears what is left
