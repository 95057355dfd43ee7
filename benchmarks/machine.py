"""What the whole machine did meanwhile, for benchmarks whose work runs in containers (whose CPU no
``getrusage`` of the benchmark's sees): CPU seconds busy, all cores and processes together."""

from __future__ import annotations

import os
from pathlib import Path


def host_cpu() -> float:
    """CPU seconds the machine has been busy so far (``/proc/stat``: all but idle and iowait)."""
    fields = [int(f) for f in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")
