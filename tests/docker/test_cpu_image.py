"""The cpu image serves the course: token auth, jovyan, 8 devices, nbgrader's student side,
released notebooks that run without a network, and nothing an instructor keeps to themselves."""

from __future__ import annotations

import io
import json
import os
import re
import tarfile

import pytest

from autograder.delivery import lab
from autograder.engine import images
from autograder.engine.containers import running
from autograder.specs import get

from ..helpers.course import REPO
from ..helpers.images import jovyan_dir, released_notebooks, run_once, wait_for_log

pytestmark = pytest.mark.docker

# nbgrader's own package strips solutions: its source names the markers, its tests ship a gradebook.
NBGRADER_ITSELF = "opt/venv/lib/python3.11/site-packages/nbgrader/"
MARKER_RE = re.compile(rb"#+ *(BEGIN|END) (SOLUTION|HIDDEN TESTS)")
COURSE_DIRS = ("opt/jaxcourse/", "srv/", "home/")
# What an unsolved exercise may raise: its stub, or its self-check failing.
UNSOLVED = {"NotImplementedError", "AssertionError"}


def test_image_metadata(client, cpu_image):
    config = client.images.get(cpu_image).attrs["Config"]
    labels = config["Labels"]
    assert labels["org.jaxcourse.variant"] == "cpu"
    assert labels["org.jaxcourse.lock-sha256"] == images.lock_sha256(REPO, "cpu")
    assert labels["org.opencontainers.image.revision"] not in ("", "unknown")
    assert config["User"] == "1000:100"
    assert config["Entrypoint"][0] == "tini", "tini must be PID 1 to reap kernels and forward signals"
    assert "8888/tcp" in config["ExposedPorts"]
    assert config["Healthcheck"]["Test"][0] == "CMD"
    env = dict(e.split("=", 1) for e in config["Env"])
    assert env["JAXCOURSE_NUM_DEVICES"] == "8" and env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"


def test_lab_needs_its_token(lab_container):
    assert lab_container.get("/api/status").status_code == 200
    refused = lab_container.get("/api/status", token=False)
    assert refused.status_code == 403, f"/api/status without a token gave {refused.status_code}, not 403"


def test_runs_as_jovyan(lab_container):
    code, out = lab_container.exec("id")
    assert code == 0 and "uid=1000(jovyan) gid=100(users)" in out, out
    code, out = lab_container.exec("sh", "-c", "ps -o user= -p 1 2>/dev/null || stat -c %u /proc/1")
    assert "root" not in out, f"PID 1 runs as {out.strip()}"


def test_serves_as_another_uid(client, cpu_image, tmp_path):
    """A laptop user whose uid is not 1000: `jaxcourse lab` runs the container as them."""
    uid = 4242 if os.geteuid() == 0 else os.getuid()
    work = tmp_path / "work"
    work.mkdir()
    if os.geteuid() == 0:
        os.chown(work, uid, uid)
    options = dict(
        image=cpu_image,
        user=f"{uid}:{uid}",
        environment={"JUPYTER_TOKEN": "t"},
        volumes={str(work): {"bind": lab.WORK_IN_CONTAINER, "mode": "rw"}},
    )
    with running(client, **options) as container:
        lab.wait_healthy(container)
    assert (work / ".jaxcourse" / "seeded.json").stat().st_uid == uid, "the work dir was not filled as the user"


def test_jax_sees_eight_cpu_devices(lab_container):
    code, out = lab_container.exec("python", "-c", "import jax; print(jax.device_count(), jax.devices()[0].platform)")
    assert code == 0 and out.strip().splitlines()[-1] == "8 cpu", out


def test_device_count_follows_jaxcourse_num_devices(client, cpu_image):
    code, out = run_once(
        client,
        cpu_image,
        ["python", "-c", "import jax; print('devices', jax.device_count())"],
        environment={"JAXCOURSE_NUM_DEVICES": "4"},
        network_mode="none",
    )
    assert code == 0 and "devices 4" in out, out


def test_says_which_platform_jax_found_once_the_server_answers(client, cpu_image):
    """Importing JAX beside the server's start made a cold start 4.3x slower (benchmarks/images.py
    times it); a server held back for 6 s shows whether the platform line waits for it."""
    late_server = ["bash", "-c", "sleep 6; exec jupyter lab --ip=0.0.0.0 --no-browser"]
    with running(client, image=cpu_image, command=late_server) as container:
        lab.wait_healthy(container)
        log = wait_for_log(container, "jaxcourse: cpu image:")
    assert "found 8 cpu device(s)" in log, log
    serving, platform = log.index("is running at"), log.index("jaxcourse: cpu image:")
    assert serving < platform, f"JAX was imported before the server answered:\n{log}"


def test_nbgrader_student_extensions_only(lab_container):
    _, out = lab_container.exec("jupyter", "server", "extension", "list")
    for name in ("assignment_list", "validate_assignment"):
        assert re.search(rf"nbgrader\.server_extensions\.{name}\s+\S*enabled", out), out
    _, out = lab_container.exec("jupyter", "labextension", "list")
    assert "@jupyter/nbgrader" in out and "enabled" in out, out
    disabled = out.split("Disabled extensions:")[-1]
    for plugin in ("formgrader", "create-assignment", "course-list"):
        assert f"@jupyter/nbgrader:{plugin}" in disabled, f"students must not get nbgrader's {plugin}"
    assert lab_container.get("/formgrader").status_code == 404


def test_assignments_validate_and_submit(lab_container, sources):
    listing = lab_container.get("/assignments", course_id=images.COURSE_ID).json()
    assert listing["success"], listing
    names = {a["assignment_id"] for a in listing["value"]}
    released = {p.name for p in sources.release.iterdir() if p.is_dir()}
    assert names == released, f"the Assignments panel lists {names}, the release holds {released}"

    notebook = released_notebooks(sources)[0].relative_to(sources.release).as_posix()
    validated = lab_container.post("/assignments/validate", path=notebook).json()
    assert validated["success"], validated
    assert "failed" in validated["value"], "an unsolved release must fail Validate"

    name = sorted(names)[0]
    submitted = lab_container.post("/assignments/submit", assignment_id=name, course_id=images.COURSE_ID).json()
    assert submitted["success"], submitted
    _, out = lab_container.exec("ls", f"/srv/nbgrader/exchange/{images.COURSE_ID}/inbound", user="root")
    assert f"jovyan+{name}+" in out, out


def test_jupyterhub_singleuser_present(lab_container):
    code, out = lab_container.exec("jupyterhub-singleuser", "--version")
    assert code == 0 and re.match(r"\d+\.\d+", out.strip()), out


def test_released_notebooks_run_without_network(client, cpu_image, sources, tmp_path):
    """Lectures and releases run, offline, to their unsolved exercise stubs and those stubs'
    failing checks, and to nothing else: imports, devices, meshes and demos all work."""
    out = jovyan_dir(tmp_path / "out")
    targets = [
        f"/opt/jaxcourse/seed/assignments/{p.relative_to(sources.release).as_posix()}"
        for p in released_notebooks(sources)
    ]
    targets += [f"/opt/jaxcourse/seed/lectures/{p.name}" for p in sorted(sources.course.glob("*.ipynb"))]
    # Two at a time, one a core: a notebook's kernel mostly waits on one thread (start-up, imports,
    # small programs), so the pair takes about half as long; xargs exits non-zero if either fails.
    pairs = " ".join(f"{i} {t}" for i, t in enumerate(targets))
    script = (
        f"printf '%s %s\\n' {pairs} | xargs -P 2 -n 2 sh -c '"
        "exec jupyter nbconvert --to notebook --execute --allow-errors --ExecutePreprocessor.timeout=600 "
        '--output-dir /out --output "$0.ipynb" "$1"\''
    )
    code, log = run_once(
        client,
        cpu_image,
        ["bash", "-c", script],
        network_mode="none",
        volumes={str(out): {"bind": "/out", "mode": "rw"}},
    )
    assert code == 0, log[-3000:]
    for i, target in enumerate(targets):
        cells = [c for c in json.loads((out / f"{i}.ipynb").read_text())["cells"] if c["cell_type"] == "code"]
        errors = [o for c in cells for o in c.get("outputs", []) if o["output_type"] == "error"]
        assert not [o for o in cells[0].get("outputs", []) if o["output_type"] == "error"], (
            f"{target}: the setup cell failed"
        )
        unexpected = [
            f"{o['ename']}: {o['evalue'][:200]}"
            for o in errors
            # a check's error is one line in a notebook; its value keeps every part's reason
            if o["ename"] not in UNSOLVED and "NotImplementedError" not in o["evalue"] + "".join(o["traceback"])
        ]
        assert not unexpected, f"{target} failed for a reason other than unsolved stubs: {unexpected}"


class _Chunks(io.RawIOBase):
    """A file object over docker-py's export generator, for tarfile's streaming mode."""

    def __init__(self, chunks):
        self._chunks, self._pending = iter(chunks), b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._pending:
            try:
                self._pending = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(buffer), len(self._pending))
        buffer[:n], self._pending = self._pending[:n], self._pending[n:]
        return n


def test_image_holds_no_solutions_or_hidden_tests(client, cpu_image):
    """Walk every file of the image's filesystem (docker export), not just the places we COPY to."""
    container = client.containers.create(cpu_image)
    problems, files = [], 0
    try:
        stream = io.BufferedReader(_Chunks(container.export(chunk_size=1 << 20)), buffer_size=1 << 20)
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for member in tar:
                name = member.name.lstrip("./")
                if name.startswith(NBGRADER_ITSELF):
                    continue
                parts = name.split("/")
                if ("solutions" in parts[:-1] and parts[-1] == "__init__.py") or name.endswith(
                    "solutions/collectives.py"
                ):
                    problems.append(f"{name}: a solutions package")
                if "/assignments/source/" in f"/{name}" or parts[-1] == "gradebook.db":
                    problems.append(f"{name}: instructor files")
                if not member.isfile():
                    continue
                files += 1
                data = tar.extractfile(member).read()
                bare = b"BEGIN SOLUTION" in data or b"BEGIN HIDDEN TESTS" in data
                if MARKER_RE.search(data) or (name.startswith(COURSE_DIRS) and bare):
                    problems.append(f"{name}: solution or hidden-test markers")
    finally:
        container.remove(force=True)
    assert files > 10_000, f"the export held only {files} files: the walk did not see the image"
    assert not problems, "the student image holds instructor material:\n" + "\n".join(problems[:20])


def test_pip_freeze_recorded_and_matches_the_lock(lab_container):
    code, freeze = lab_container.exec("cat", "/opt/jaxcourse/pip-freeze.txt")
    assert code == 0 and "jax==0.10.2" in freeze and "jaxlib==0.10.2" in freeze, freeze[:500]
    lock = (REPO / "requirements" / "cpu.lock").read_text()
    pinned = dict(re.findall(r"^([a-z0-9][a-z0-9._-]*)==(\S+)", lock, re.M))
    installed = dict(re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", freeze, re.M))
    norm = {re.sub(r"[-_.]+", "-", k).lower(): v for k, v in installed.items()}
    drift = {k: (v, norm.get(k)) for k, v in pinned.items() if norm.get(k) != v}
    assert not drift, f"installed versions differ from requirements/cpu.lock: {drift}"
    assert not re.search(r"^nvidia-|^jax-cuda|^libtpu", freeze, re.M), "the cpu image must hold no CUDA or TPU runtime"


FINDER = (REPO / "tests" / "adversarial" / "finds_answers.py").read_text()


def test_the_image_holds_no_answer_a_student_could_call(client, cpu_image):
    """The student's own kernel has the whole package (the sandbox has less): no solutions package,
    and no function named as a graded one, closed form kept for a task, or callable field of a
    task record, anywhere in it (the search a dishonest student would run, tests/adversarial)."""
    script = FINDER + (
        "\nimport json\nfrom autograder.specs import ASSIGNMENTS, EXERCISES\n"
        "found = {t.name: [getattr(c, '__qualname__', repr(c)) for c in candidates(t.name, worded=False)]\n"
        "         for a in (*ASSIGNMENTS.values(), *EXERCISES.values()) for t in a.tasks}\n"
        "try:\n    import solutions\n    found['solutions'] = [solutions.__file__]\n"
        "except ModuleNotFoundError:\n    pass\n"
        "print('FOUND', json.dumps({k: v for k, v in found.items() if v}))\n"
    )
    code, out = run_once(client, cpu_image, ["python", "-c", script], network_mode="none")
    assert code == 0, out[-2000:]
    # The image's own start-up lines (what it copied, which platform JAX found) come and go around it.
    assert [line for line in out.splitlines() if line.startswith("FOUND ")] == ["FOUND {}"], out[-2000:]


def test_the_image_checks_against_its_shipped_records_only(client, cpu_image, sources):
    """The records a student's check judges against are in the image, exactly as the release made
    them (visible cases only: tests/delivery/test_release.py), and a right answer passes its check there."""
    code, out = run_once(client, cpu_image, ["sh", "-c", 'cd "$JAXCOURSE_EXPECTED" && find . -type f | sort'])
    assert code == 0, out
    shipped = sorted(
        f"./{p.relative_to(sources.expected).as_posix()}" for p in sources.expected.rglob("*") if p.is_file()
    )
    assert [line for line in out.splitlines() if line.startswith("./")] == shipped, out[-2000:]
    local_shape = (REPO / "solutions" / "collectives.py").read_text().split("def local_shape")[1].split("\ndef ")[0]
    script = (
        "from math import prod\nfrom autograder.checks import check\n"
        f"def local_shape{local_shape}\n"
        "print('CHECKED', check(local_shape).score)\n"
    )
    code, out = run_once(client, cpu_image, ["python", "-c", script], network_mode="none")
    visible = get("01_collectives").task("local_shape").points["values"]  # hidden cases stay with the instructor
    assert code == 0 and f"CHECKED {visible}" in out, out[-2000:]
