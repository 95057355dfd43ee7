"""A class on this machine, measured: how long a student's server takes to spawn, how much memory
an idle student holds (so: how many students one host serves), and how long from Submit to
feedback visible in the student's Assignments panel, for one student and for ten at once.

    .venv/bin/python benchmarks/class_hub.py [--students 10]

A real `jaxcourse hub up` on a private copy of the course (the hub, its proxy, DockerSpawner, the
exchange, Redis, the grading service and one worker), 01_collectives released, students driven
over HTTP exactly as nbgrader's panel drives their servers. Targets (the class issue): spawn
under 5 s; median Submit-to-feedback under 20 s for one student, under 5 s for ten at once
(issue 56). Ten at once is measured twice, side by side: with every panel asked five times a
second throughout, and with each panel asked once its submission's outcome is marked in the
exchange; each prints the CPU the machine and each kind of container used meanwhile.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.grading.sandbox.docker_sandbox import LABEL  # noqa: E402
from benchmarks.machine import host_cpu  # noqa: E402
from classroom.hub.deploy import LOCAL_DOMAIN  # noqa: E402
from tests.helpers.classroom import class_course, wait_for  # noqa: E402
from tests.helpers.course import ASSIGNMENT, copy_course, solved_notebook  # noqa: E402
from tests.helpers.hub import (  # noqa: E402
    User,
    jaxcourse,
    put_notebook,
    resolve_localhost_subdomains,
    submitted,
)
from tests.helpers.net import free_port  # noqa: E402

HOST_MEMORY_GIB = 24  # this machine's


def submit_to_feedback(user: User, outcomes: Path | None = None) -> float:
    """Seconds from Submit to the panel listing this submission's feedback as there to fetch.
    Without ``outcomes`` the panel is asked every 0.2 s from the start, as a student clicking
    Refresh without pause; with it (the exchange's outcome markers on the host) the panel is asked
    only once the grading service has marked a new outcome for this student, as a student who
    refreshes when it is ready: no lab spends its CPU listing what has not changed."""
    before = len(submitted(user.assignments(), ASSIGNMENT))
    pattern = f"{user.name}/{ASSIGNMENT}/*.json"
    marked = len(list(outcomes.glob(pattern))) if outcomes else 0
    start = time.perf_counter()
    user.action("submit", ASSIGNMENT)
    if outcomes is not None:
        wait_for(lambda: len(list(outcomes.glob(pattern))) > marked, 600, f"{user.name}'s outcome", every=0.05)

    def shown() -> bool:
        subs = submitted(user.assignments(), ASSIGNMENT)
        return len(subs) > before and subs[-1]["has_exchange_feedback"]

    wait_for(shown, 600, f"{user.name}'s feedback", every=0.2)
    return time.perf_counter() - start


def idle_memory_mib(names: list[str]) -> list[float]:
    """Each container's memory in use, as `docker stats` reports it (MiB)."""
    out = subprocess.run(
        ["docker", "stats", "--no-stream", "--format", "{{.Name}} {{.MemUsage}}", *names],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    used = []
    for line in out.splitlines():
        value = line.split()[1]
        number, unit = float(value[:-3]), value[-3:]
        used.append(number * {"KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0}[unit])
    return used


def container_cpu() -> dict[str, float]:
    """CPU seconds each running container has used so far, by name (a sandbox's prefixed
    ``sandbox-``), from its cgroup: v1's cpuacct, or v2's cpu.stat under either of Docker's
    cgroup drivers; for where a burst's CPU went."""
    out = subprocess.run(
        ["docker", "ps", "--no-trunc", "--format", f'{{{{.ID}}}} {{{{.Names}}}} {{{{.Label "{LABEL}"}}}}'],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    used = {}
    for line in out.splitlines():
        cid, name, *sandbox = line.split()
        v1 = Path(f"/sys/fs/cgroup/cpuacct/docker/{cid}/cpuacct.usage")  # nanoseconds
        v2 = [
            Path(f"/sys/fs/cgroup/{group}/cpu.stat") for group in (f"docker/{cid}", f"system.slice/docker-{cid}.scope")
        ]
        key = f"sandbox-{name}" if sandbox else name
        if v1.is_file():
            used[key] = int(v1.read_text()) * 1e-9
        elif stat := next((p for p in v2 if p.is_file()), None):
            used[key] = int(stat.read_text().split()[1]) * 1e-6  # its first line: usage_usec
    return used


def by_role(used: dict[str, float], classname: str) -> dict[str, float]:
    """Containers' CPU summed by what they are: every student's lab, every sandbox, each service."""
    roles: dict[str, float] = {}
    for name, seconds in used.items():
        role = name.removeprefix(f"jaxcourse-{classname}-")
        role = "labs" if role.startswith("lab-") else "sandboxes" if name.startswith("sandbox-") else role
        roles[role] = roles.get(role, 0.0) + seconds
    return roles


def at_once(users: list[User], outcomes: Path | None = None) -> list[float]:
    results: dict[str, float] = {}

    def one(user: User) -> None:
        results[user.name] = submit_to_feedback(user, outcomes)

    threads = [threading.Thread(target=one, args=(u,)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return list(results.values())


def burst(
    users: list[User], classname: str, outcomes: Path | None = None
) -> tuple[list[float], float, dict[str, float]]:
    """Every student submits at once: their times, the host's CPU seconds meanwhile, and the
    containers' by role."""
    cpu_before, host_before = container_cpu(), host_cpu()
    times = at_once(users, outcomes)
    cpu_after, host_after = container_cpu(), host_cpu()
    used = {n: cpu_after[n] - cpu_before.get(n, 0.0) for n in cpu_after}
    return times, host_after - host_before, by_role(used, classname)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=10)
    args = parser.parse_args()
    names = [f"s{i:02d}" for i in range(args.students)]
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        course = class_course(copy_course(tmp / "course"), "")
        roster, classdir, port = tmp / "roster.csv", tmp / "bench", free_port()
        roster.write_text(
            "username,role,password\nteach,instructor,teach-pw-1\n" + "".join(f"{n},student,{n}-pw-1\n" for n in names)
        )
        jaxcourse(course.root, "hub", "up", "--class", str(classdir), "--roster", str(roster), "--port", str(port))
        try:
            jaxcourse(course.root, "release", ASSIGNMENT, "--class", str(classdir))
            resolve_localhost_subdomains()
            users = [User(f"http://{LOCAL_DOMAIN}:{port}", n, f"{n}-pw-1") for n in names]
            spawn = []
            for user in users:
                assert user.login().status_code == 302
                user.make_token()
                spawn.append(user.start_server())
                user.action("fetch", ASSIGNMENT)
                put_notebook(user, solved_notebook(course))
            time.sleep(20)  # idle: kernels none, servers settled
            memory = idle_memory_mib([f"jaxcourse-{classdir.name}-lab-{n}" for n in names])
            alone = [submit_to_feedback(users[i]) for i in range(3)]
            outcomes = classdir / "exchange" / "outcomes"
            polled = burst(users, classdir.name)
            time.sleep(5)  # the queue and the lanes settled
            watched = burst(users, classdir.name, outcomes)
        finally:
            jaxcourse(course.root, "hub", "down", "--class", str(classdir))
    per_student = statistics.median(memory)
    print(f"students: {args.students}   cores: 2   one grading worker (2 slots), docker sandbox")
    print(
        f"spawn a student's server: median {statistics.median(spawn):.1f} s, worst {max(spawn):.1f} s (target: under 5 s)"
    )
    print(
        f"memory per idle student: median {per_student:.0f} MiB, worst {max(memory):.0f} MiB: "
        f"a {HOST_MEMORY_GIB} GiB host holds about {int(HOST_MEMORY_GIB * 1024 * 0.9 // per_student)} idle students "
        f"(90% of its memory; each may use up to its limit while it works)"
    )
    print(
        f"Submit to feedback, one student at a time (3): median {statistics.median(alone):.1f} s, worst "
        f"{max(alone):.1f} s (target: median under 20 s)"
    )
    for (times, host, roles), how in (
        (polled, "every panel asked every 0.2 s"),
        (watched, "each panel asked once its outcome is marked"),
    ):
        print(
            f"Submit to feedback, {len(users)} students at once, {how}: median {statistics.median(times):.1f} s, "
            f"worst {max(times):.1f} s (target: median under 5 s)"
        )
        print(
            f"  CPU meanwhile: {host:.1f} s on the host in all; by container: "
            + ", ".join(f"{role} {seconds:.1f} s" for role, seconds in sorted(roles.items(), key=lambda kv: -kv[1]))
        )


if __name__ == "__main__":
    main()
