"""`jaxcourse lab`: the student's JupyterLab, in the course image, or from the local venv.

With a Docker engine: build the image if missing, start it bound to 127.0.0.1 with the student's
work directory mounted, print the URL with its token, stop and remove it on Ctrl-C. Without one:
say so in one line and serve the same course (8 simulated devices, nbgrader's student extension,
the same work directory, a token) from the local venv.

Either way the work directory is filled by `seed`: lectures and released assignments are copied in
on first start, and later starts or image upgrades never overwrite a file the student changed.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import environment, logs
from ..core.errors import JaxcourseError
from ..engine import health, images
from ..engine.containers import PortHeld, removed_after, started
from .seeding import SeedReport, seed

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from docker.client import DockerClient
    from docker.models.containers import Container

WORK_IN_CONTAINER = "/home/jovyan/work"
JOVYAN = (1000, 100)
READY_TIMEOUT_S = 180.0


# ---- the command -------------------------------------------------------------------------------


def run(work: Path, variant: str = "cpu", port: int = 8888, local: bool = False) -> int:
    """Serve until Ctrl-C; bad input or a failed start raises ``LabError`` (one line)."""
    work = work.expanduser().resolve()
    created = not work.exists()
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise LabError(f"cannot use {work} as the work directory: {err.strerror}") from None
    token = secrets.token_hex(24)
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` or a closed terminal: clean up as for Ctrl-C
    signal.signal(signal.SIGHUP, _interrupt)
    if local:
        return serve_local(work, port, token)
    try:
        client = images.connect()
    except images.EngineUnavailable as err:
        log.info(f"jaxcourse: {err}; serving the course from the local venv instead")
        return serve_local(work, port, token)
    return serve_docker(client, variant, work, port, token, created)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


class LabError(JaxcourseError):
    """The lab did not come up; the message says why in one line."""


def _url(port: int, token: str) -> str:
    return f"http://127.0.0.1:{port}/lab?token={token}"


# ---- in Docker ---------------------------------------------------------------------------------


def container_options(variant: str, work: Path, port: int, token: str) -> dict[str, Any]:
    """docker-py ``containers.create`` options for a variant: GPUs for cuda, TPU VM flags for tpu."""
    import docker

    uid = os.getuid()
    options: dict[str, Any] = {
        "image": images.tag(variant),
        "name": f"jaxcourse-lab-{port}",
        "environment": {"JUPYTER_TOKEN": token},
        "volumes": {str(work): {"bind": WORK_IN_CONTAINER, "mode": "rw"}},
        # The student's uid, so the files on the host stay theirs; jovyan when the host user is root.
        "user": f"{JOVYAN[0]}:{JOVYAN[1]}" if uid == 0 else f"{uid}:{os.getgid()}",
        "labels": {"org.jaxcourse.lab": variant},
    }
    if variant == "tpu":
        # Google's TPU VM recipe: the TPU chips and their runtime need the host's devices and network.
        options |= {
            "privileged": True,
            "network_mode": "host",
            "command": ["jupyter", "lab", "--ip=127.0.0.1", "--no-browser"],
        }
        options["environment"]["JUPYTER_PORT"] = str(port)
    else:
        options["ports"] = {"8888/tcp": ("127.0.0.1", port)}
    if variant == "cuda":
        options["device_requests"] = [docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])]
    return options


def start_container(client: DockerClient, options: dict[str, Any]) -> Container:
    """Start the lab container; a cuda start without a GPU runtime goes on without GPUs, and says so."""
    from docker.errors import APIError, NotFound

    try:
        old = client.containers.get(options["name"])
    except NotFound:
        old = None
    if old is not None:
        if old.status == "running":
            port = options["name"].rsplit("-", 1)[-1]
            raise LabError(
                f"a lab already runs on port {port} (container {old.name}): "
                f"stop it with `docker stop {old.name}` or use --port"
            )
        old.remove(force=True)
    try:
        return started(client, **options)
    except PortHeld:
        raise LabError(f"port {options['name'].rsplit('-', 1)[-1]} is in use: pick another with --port") from None
    except APIError as err:
        text = str(err.explanation or err)
        if "device_requests" in options and ("gpu" in text.lower() or "device driver" in text):
            log.warning("jaxcourse: Docker has no GPU runtime here (NVIDIA container toolkit); starting without GPUs")
            return start_container(client, {k: v for k, v in options.items() if k != "device_requests"})
        raise LabError(f"cannot start the lab container: {text.splitlines()[0]}") from None


def wait_healthy(container: Container, timeout: float = READY_TIMEOUT_S) -> float:
    """Seconds until the lab's HEALTHCHECK passes; LabError with its last output if it dies."""
    try:
        return health.wait_healthy(container, timeout)
    except health.Unhealthy as err:
        raise LabError(f"the lab container {err}; see `docker logs {container.name}`") from None


def serve_docker(client: DockerClient, variant: str, work: Path, port: int, token: str, created: bool) -> int:
    images.ensure(variant, client)
    if os.getuid() == 0 and created:
        os.chown(work, *JOVYAN)  # a root host user: the container's jovyan must write here
    ready = False
    try:
        with removed_after(start_container(client, container_options(variant, work, port, token)), 10) as container:
            wait_healthy(container)
            ready = True
            log.info(f"jaxcourse: JupyterLab ({variant} image) is ready; your work is in {work}")
            log.info(f"    {_url(port, token)}")
            log.info("jaxcourse: Ctrl-C stops it")
            return _follow(container)
    except KeyboardInterrupt:
        log.info("\njaxcourse: stopping the lab")
        return 0
    finally:
        if ready:
            log.info(f"jaxcourse: lab stopped; your work stays in {work}")


def _follow(container: Container) -> int:
    """Echo the container's own messages (platform, course files) and errors until it ends."""
    pending = b""
    for chunk in container.logs(stream=True, follow=True):
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for raw in lines:
            line = raw.decode(errors="replace")
            if line.startswith("jaxcourse:") or line.startswith("[E "):
                log.info(line)
    return int(container.wait().get("StatusCode", 0))


# ---- without Docker ----------------------------------------------------------------------------


def scripts_path() -> str:
    """``PATH`` with this Python's scripts folder (the venv's ``bin``, where ``jaxcourse`` is) first:
    the lab's terminals and a notebook's ``!jaxcourse`` find the command, activated venv or not."""
    ours = list(dict.fromkeys([sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]))
    rest = [p for p in os.environ.get("PATH", os.defpath).split(os.pathsep) if p and p not in ours]
    return os.pathsep.join(ours + rest)


def terminal_shell() -> str:
    """The shell of the lab's terminals: the student's own, as Jupyter picks it."""
    return os.environ.get("SHELL") or shutil.which("sh") or "/bin/sh"


def local_env(work: Path, token: str, repo: Path) -> dict[str, str]:
    """The image's environment, recreated for a local jupyter process."""
    devices = os.environ.get(environment.NUM_DEVICES, "8")
    ours = str(repo / "docker" / "jupyter")
    config_path = os.pathsep.join(filter(None, [ours, os.environ.get("JUPYTER_CONFIG_PATH")]))
    return os.environ | {
        "PATH": scripts_path(),
        environment.VARIANT: "cpu",
        environment.NUM_DEVICES: devices,
        "JAX_NUM_CPU_DEVICES": devices,
        environment.EXCHANGE: str(work / ".jaxcourse" / "exchange"),
        environment.COURSE_ID: images.COURSE_ID,
        environment.WORK: str(work),
        # The checks judge against the release's records, as the image's do (grading/pipeline/expected.py).
        environment.EXPECTED: str(images.Sources.of(repo).expected),
        "JUPYTER_CONFIG_PATH": config_path,
        "JUPYTER_TOKEN": token,
    }


def prepare_local(work: Path, repo: Path) -> SeedReport:
    """Fill the work dir and a private nbgrader exchange, as the image has them."""
    sources = images.Sources.of(repo)
    exchange = work / ".jaxcourse" / "exchange"
    outbound = exchange / images.COURSE_ID / "outbound"
    if sources.release.is_dir():
        shutil.rmtree(outbound, ignore_errors=True)
        shutil.copytree(sources.release, outbound)
    (exchange / images.COURSE_ID / "inbound").mkdir(parents=True, exist_ok=True)
    return seed(work, {"": sources.release, "lectures": sources.course, ".": repo / "docker" / "seed"})


def serve_local(work: Path, port: int, token: str) -> int:
    repo = images.find_repo()
    if not images.Sources.of(repo).release.is_dir():
        log.info("jaxcourse: no assignments/release/ in this checkout (`jaxcourse release` makes it): lectures only")
    report = prepare_local(work, repo)
    log.info(report.summary())
    log_path = work / ".jaxcourse" / "lab.log"
    argv = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={work}",
        # The image's settings (docker/lab/overrides.json): offline, no news and no update checks.
        f"--LabApp.app_settings_dir={repo / 'docker' / 'lab'}",
        # The student's shell as their own terminal has it: Jupyter, its output not a terminal,
        # would start a login shell, whose /etc/profile (Debian's) resets PATH without the venv.
        f"--ServerApp.terminado_settings={json.dumps({'shell_command': [terminal_shell()]})}",
    ]
    if os.geteuid() == 0:
        argv.append("--allow-root")  # CI machines and containers; the token still guards it
    with open(log_path, "wb") as jupyter_log:
        # Its own session: the terminal's Ctrl-C reaches us alone, and we stop Jupyter without its prompt.
        proc = subprocess.Popen(
            argv,
            env=local_env(work, token, repo),
            cwd=work,
            stdout=jupyter_log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    ready = False
    try:
        _wait_local(proc, port, log_path)
        ready = True
        log.info(
            f"jaxcourse: JupyterLab (local venv, {local_env(work, token, repo)['JAX_NUM_CPU_DEVICES']} "
            f"simulated CPU devices) is ready; your work is in {work}"
        )
        log.info(f"    {_url(port, token)}")
        log.info(f"jaxcourse: Ctrl-C stops it; its log is {log_path}")
        return proc.wait()
    except KeyboardInterrupt:
        log.info("\njaxcourse: stopping the lab")
        return 0
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
        if ready:
            log.info(f"jaxcourse: lab stopped; your work stays in {work}")


def _wait_local(proc: subprocess.Popen[bytes], port: int, log_path: Path) -> None:
    start = time.monotonic()
    while time.monotonic() - start < READY_TIMEOUT_S:
        if proc.poll() is not None:
            last = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["no log"]
            raise LabError(f"JupyterLab exited with status {proc.returncode}: {last[0]} (log: {log_path})")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise LabError(f"JupyterLab did not answer on port {port} within {READY_TIMEOUT_S:.0f} s (log: {log_path})")


# ---- python -m autograder.delivery.lab seed SRC WORK: the image's entrypoint ---------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Fill WORK from SRC at container start; `jaxcourse lab` itself lives in the jaxcourse command."""
    import argparse

    logs.configure()  # the summary goes to the container's log, where a student's `docker logs` finds it

    parser = argparse.ArgumentParser(prog="python -m autograder.delivery.lab")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("seed", help="fill WORK from SRC without overwriting the student's changes")
    s.add_argument("src", type=Path, help="the image's seed: assignments/, lectures/, welcome/")
    s.add_argument("work", type=Path)
    s.add_argument("--class", dest="in_class", action="store_true", help="no assignments: a class fetches them")
    args = parser.parse_args(argv)
    parts = {"lectures": args.src / "lectures", ".": args.src / "welcome"}
    report = seed(args.work, parts if args.in_class else {"": args.src / "assignments", **parts})
    if report.copied or report.updated or report.kept:
        log.info(report.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
