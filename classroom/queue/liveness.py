"""Which worker is grading a job, and whether it is still alive: a worker marks each job it
takes and beats every few seconds; a job whose worker has stopped beating is sent again at once
(Redis would hand an unacknowledged job out again only after the visibility timeout, minutes)."""

from __future__ import annotations

import threading
from typing import Any

RUNNING = "jaxcourse:running:"  # + job id -> the worker's host name
ALIVE = "jaxcourse:alive:"  # + host name, expiring unless the worker beats
BEAT = 2.0  # seconds between beats
LIFE = 8  # seconds a beat lasts: four beats missed and the worker counts as gone


def taken(client: Any, job_id: str, hostname: str, seconds: float) -> None:
    client.set(RUNNING + job_id, hostname, ex=int(seconds) + 1)


def beat_forever(client: Any, hostname: str, stop: threading.Event) -> None:
    """Beat until ``stop``; a broker that does not answer is tried again at the next beat."""
    while not stop.is_set():
        try:
            client.set(ALIVE + hostname, 1, ex=LIFE)
        except Exception:  # the broker restarting: the beats resume when it is back
            pass
        stop.wait(BEAT)


def lost_worker(client: Any, job_id: str) -> str | None:
    """The host that took ``job_id`` if it has stopped beating (its mark is cleared), else None."""
    host = client.get(RUNNING + job_id)
    if host is None:
        return None
    name = host.decode() if isinstance(host, bytes) else str(host)
    if client.exists(ALIVE + name):
        return None
    client.delete(RUNNING + job_id)
    return name
