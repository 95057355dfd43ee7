"""The Celery application both sides share: one task, JSON only, nothing lost when a host dies.

- JSON is the only serializer either side accepts: a message can never unpickle code.
- A job is acknowledged late, after its result is stored (Redis with its append-only file on), and
  each worker slot takes one job at a time: a worker killed mid-job leaves the job unacknowledged,
  and Redis gives it to another worker once the visibility timeout has passed.
- Results are stored and read with retries, so a Redis restart in the middle of a job delays its
  outcome instead of turning it into a failure.
- The visibility timeout is longer than the slowest job's limits (``visibility_timeout``), so a
  job still running is never handed out twice.
- A ``rediss://`` broker (a queue that crosses hosts) is spoken to over TLS, its certificate
  checked against the class's own CA (``$JAXCOURSE_BROKER_CA``). That CA signs one certificate,
  Redis's, so the chain alone names the server; host names are not checked, since the recorder
  may reach Redis by an address rather than its name.
"""

from __future__ import annotations

import os
import re
import ssl
from typing import TYPE_CHECKING, Any

from autograder.core.errors import JaxcourseError
from classroom import environment

if TYPE_CHECKING:
    from celery import Celery

TASK = "jaxcourse.grade"
QUEUE = "jaxcourse-grade"
_URL = re.compile(r"^rediss?://(:[^@/]+@)?[A-Za-z0-9_.-]+(:\d{1,5})?(/\d{1,2})?$")
RESULT_DAYS = 7  # how long a result waits in Redis for its recorder
MARGIN = 60.0  # seconds beyond a job's own limits before Redis hands it out again


class BrokerError(JaxcourseError):
    """A broker URL that is not a Redis URL this tool can use, or a broker that does not answer."""


def check_url(url: str) -> str:
    """``redis://[:password@]host[:port][/db]``, or BrokerError saying what to write."""
    if not _URL.match(url):
        raise BrokerError(f"{shown(url)!r} is not a Redis URL: write redis://:PASSWORD@HOST:6379/0")
    return url


def shown(url: str) -> str:
    """The URL with its password hidden, for messages and summaries."""
    return re.sub(r"//:[^@/]*@", "//:***@", url)


def visibility_timeout(job_seconds: float) -> float:
    return job_seconds + MARGIN


def make_app(broker: str, job_seconds: float, restore_every: float = 10.0) -> Celery:
    """The application for ``broker``; ``job_seconds`` bounds one job, ``restore_every`` is how
    often a worker looks for jobs a dead worker left unacknowledged."""
    from celery import Celery

    check_url(broker)
    app = Celery("jaxcourse", broker=broker, backend=broker, set_as_current=False)
    transport: dict[str, Any] = {
        "visibility_timeout": visibility_timeout(job_seconds),
        "unacked_restore_interval": restore_every,
        "unacked_restore_throttle": 1,
    }
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_accept_content=["json"],
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=QUEUE,
        task_routes={TASK: {"queue": QUEUE}},
        broker_transport_options=transport,
        result_backend_transport_options=transport,
        result_expires=RESULT_DAYS * 86400,
        result_backend_always_retry=True,
        result_backend_max_retries=20,  # about two minutes, at most 10 s apart
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        task_send_sent_event=False,
    )
    if broker.startswith("rediss://"):
        app.conf.update(broker_use_ssl=tls_options(), redis_backend_use_ssl=tls_options())
    return app


def tls_options() -> dict[str, Any]:
    """What a TLS connection to the broker checks: its certificate, against the class's CA."""
    ca = os.environ.get(environment.BROKER_CA, "")
    if not os.path.isfile(ca):
        raise BrokerError(
            f"a rediss:// broker needs the class's queue CA: set ${environment.BROKER_CA} to its "
            "file (secrets/queue-tls/ca.pem in the class directory)"
        )
    return {"ssl_cert_reqs": ssl.CERT_REQUIRED, "ssl_ca_certs": ca, "ssl_check_hostname": False}
