"""`jaxcourse lab` end to end: in Docker, and from the local venv when no engine answers; the URL
with its token works, Ctrl-C stops everything, and bad input gets one line and a non-zero exit."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
import requests

from autograder.delivery import lab
from autograder.engine import images

from ..helpers.course import REPO
from ..helpers.engine import a_port_held
from ..helpers.local_lab import JAXCOURSE, read_until_url, start, stop
from ..helpers.net import free_port


@pytest.mark.docker
def test_lab_in_docker_serves_and_stops_on_ctrl_c(client, cpu_image, tmp_path):
    port, work = free_port(), tmp_path / "work"
    proc = start(["lab", "--port", str(port), "--work", str(work)])
    try:
        url, token, _ = read_until_url(proc)
        assert url == f"http://127.0.0.1:{port}"
        assert requests.get(f"{url}/api/status", params={"token": token}, timeout=30).status_code == 200
        assert requests.get(f"{url}/api/status", timeout=30).status_code == 403
        assert [c.name for c in client.containers.list(filters={"name": f"jaxcourse-lab-{port}"})]
        assert (work / ".jaxcourse" / "seeded.json").is_file(), "the work dir was not filled"
    finally:
        code, rest = stop(proc)
    assert code == 0, rest
    assert "lab stopped" in rest, rest
    assert not client.containers.list(all=True, filters={"name": f"jaxcourse-lab-{port}"}), (
        "the container outlived Ctrl-C"
    )


@pytest.mark.docker
def test_a_lab_on_a_port_held_elsewhere_is_one_line_and_leaves_no_container(client, cpu_image, tmp_path):
    work = tmp_path / "work"
    with a_port_held(client, cpu_image) as port:
        done = subprocess.run(
            [*JAXCOURSE, "lab", "--port", str(port), "--work", str(work)],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=300,
        )
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == f"jaxcourse: error: port {port} is in use: pick another with --port"
    assert "Traceback" not in done.stderr, done.stderr
    assert client.containers.list(all=True, filters={"name": f"^jaxcourse-lab-{port}$"}) == []


def _course_tree(tmp_path: Path, release: Path) -> Path:
    """A checkout to serve from: the repo's docker/ and course/, a fresh release."""
    root = tmp_path / "checkout"
    (root / "assignments").mkdir(parents=True)
    (root / "docker").symlink_to(REPO / "docker")
    (root / "course").symlink_to(REPO / "course")
    (root / "assignments" / "release").symlink_to(release)
    return root


def test_lab_without_docker_serves_from_the_local_venv(course, tmp_path):
    port, work = free_port(), tmp_path / "work"
    env = {
        "DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock",
        "JAXCOURSE_ROOT": str(_course_tree(tmp_path, course.nbgrader_root / "release")),
    }
    proc = start(["lab", "--port", str(port), "--work", str(work)], env)
    try:
        url, token, before = read_until_url(proc, timeout=120)
        notice = [line for line in before if "Docker" in line]
        assert len(notice) == 1 and "serving the course from the local venv instead" in notice[0], before
        assert any("8 simulated CPU devices" in line for line in before), before
        headers = {"Authorization": f"token {token}"}
        assert requests.get(f"{url}/api/status", timeout=30).status_code == 403
        listing = requests.get(
            f"{url}/assignments", params={"course_id": images.COURSE_ID}, headers=headers, timeout=60
        ).json()
        names = {a["assignment_id"] for a in listing["value"]}
        assert names == {p.name for p in (course.nbgrader_root / "release").iterdir() if p.is_dir()}, listing
        assert requests.get(f"{url}/formgrader", headers=headers, timeout=30).status_code == 404
        # A terminal of the lab has the venv's `jaxcourse`, whatever a login shell's profile does to PATH.
        found = in_a_terminal(url, token, 'echo "JAX""COURSE=$(command -v jaxcourse)"', "JAXCOURSE")
        assert found == str(Path(sysconfig.get_path("scripts")) / "jaxcourse")
    finally:
        code, rest = stop(proc)
    assert code == 0, rest
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{url}/api", timeout=5)


def in_a_terminal(url: str, token: str, command: str, name: str, timeout: float = 30) -> str:
    """What ``command``, typed into a new terminal of the lab, prints as ``NAME=value``."""
    import websocket  # websocket-client, locked in requirements/dev.lock

    headers = {"Authorization": f"token {token}"}
    terminal = requests.post(f"{url}/api/terminals", headers=headers, timeout=30).json()["name"]
    ws = websocket.create_connection(f"ws{url[4:]}/terminals/websocket/{terminal}?token={token}", timeout=timeout)
    seen, deadline = "", time.monotonic() + timeout
    try:
        ws.send(json.dumps(["stdin", command + "\r"]))
        while time.monotonic() < deadline:
            kind, *rest = json.loads(ws.recv())
            seen += rest[0] if kind == "stdout" else ""
            if match := re.search(rf"{name}=([^\r\n]*)\r?\n", seen):
                return match.group(1)
    finally:
        ws.close()
        requests.delete(f"{url}/api/terminals/{terminal}", headers=headers, timeout=30)
    raise AssertionError(f"the terminal printed no {name}=: {seen[-500:]!r}")


def test_the_local_lab_puts_the_venv_s_scripts_first_on_path(tmp_path, monkeypatch):
    """Without an activated venv, the local lab's terminals and `!jaxcourse` still find the command."""
    monkeypatch.setenv("PATH", os.pathsep.join(["/usr/bin", "/bin"]))
    path = lab.local_env(tmp_path / "work", "token", REPO)["PATH"]
    scripts = sysconfig.get_path("scripts")
    assert path.split(os.pathsep)[0] == scripts and path.split(os.pathsep)[-2:] == ["/usr/bin", "/bin"]
    assert str(Path(sys.executable).parent) in path.split(os.pathsep)
    assert shutil.which("jaxcourse", path=path) == str(Path(scripts) / "jaxcourse")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["lab", "--port", "70000"], "outside 1-65535"),
        (["lab", "--variant", "gpu"], "invalid choice"),
        (["image", "build", "--variant", "arm"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_non_zero(argv, message):
    done = subprocess.run([*JAXCOURSE, *argv], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in done.stderr, done.stderr


def test_lab_refuses_a_file_as_work_dir(tmp_path):
    not_a_dir = tmp_path / "notes.txt"
    not_a_dir.write_text("")
    done = subprocess.run(
        [*JAXCOURSE, "lab", "--local", "--work", str(not_a_dir)], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert done.returncode != 0
    assert done.stderr.strip().startswith("jaxcourse: error: cannot use") and len(done.stderr.strip().splitlines()) == 1
