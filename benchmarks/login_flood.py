"""What a flood of wrong passwords does to a class's hub: the hub API's median latency at rest and
while 8 threads send wrong passwords (no account needed), side by side in one run, and how the
hub answered the flood (403 wrong password, 429 throttled or busy).

    .venv/bin/python benchmarks/login_flood.py [--seconds 20] [--threads 8]

A real `jaxcourse hub up` on a private copy of the course, on 127.0.0.1; the flood is bounded in
time and sends nothing off this machine. Target (issue 24): the API's median under the flood
within 2x its median at rest. Before the login was throttled and hashed off the event loop, the
same flood took it from 7 ms to 239 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.hub.deploy import LOCAL_DOMAIN  # noqa: E402
from tests.helpers.classroom import class_course  # noqa: E402
from tests.helpers.course import copy_course  # noqa: E402
from tests.helpers.hub import User, free_port, jaxcourse, resolve_localhost_subdomains  # noqa: E402


def api_latencies(user: User, seconds: float) -> list[float]:
    """Seconds per hub API call (the caller's own user model), for ``seconds``."""
    took, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        start = time.perf_counter()
        assert user.api("GET", f"/hub/api/users/{user.name}").status_code == 200
        took.append(time.perf_counter() - start)
        time.sleep(0.02)
    return took


def flood(hub: str, threads: int, stop: threading.Event) -> Counter[int]:
    """Wrong passwords for made-up names from ``threads`` threads until ``stop``; answers by status."""
    answers: Counter[int] = Counter()

    def one(number: int) -> None:
        intruder = User(hub, f"nobody{number}", "guess")
        while not stop.is_set():
            answers[intruder.login().status_code] += 1

    workers = [threading.Thread(target=one, args=(n,), daemon=True) for n in range(threads)]
    for worker in workers:
        worker.start()
    stop.wait()
    for worker in workers:
        worker.join(timeout=60)
    return answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        course = class_course(copy_course(tmp / "course"), "")
        roster, classdir, port = tmp / "roster.csv", tmp / "flood", free_port()
        roster.write_text("username,role,password\nteach,instructor,teach-pw-1\n")
        jaxcourse(course.root, "hub", "up", "--class", str(classdir), "--roster", str(roster), "--port", str(port))
        try:
            resolve_localhost_subdomains()
            hub = f"http://{LOCAL_DOMAIN}:{port}"
            teach = User(hub, "teach", "teach-pw-1")
            assert teach.login().status_code == 302
            teach.make_token()
            at_rest = api_latencies(teach, args.seconds)
            stop = threading.Event()
            answers: Counter[int] = Counter()
            flooding = threading.Thread(target=lambda: answers.update(flood(hub, args.threads, stop)))
            flooding.start()
            time.sleep(2)  # the flood under way
            flooded = api_latencies(teach, args.seconds)
            stop.set()
            flooding.join()
        finally:
            jaxcourse(course.root, "hub", "down", "--class", str(classdir))
    rest, under = statistics.median(at_rest) * 1000, statistics.median(flooded) * 1000
    print(f"hub API median at rest: {rest:.1f} ms ({len(at_rest)} calls)")
    print(f"hub API median under a flood of {args.threads} threads: {under:.1f} ms ({len(flooded)} calls)")
    print(f"ratio: {under / rest:.2f}x (target: at most 2x)")
    print(f"the flood's {sum(answers.values())} logins were answered: {dict(sorted(answers.items()))}")


if __name__ == "__main__":
    main()
