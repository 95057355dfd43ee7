"""The environment variables more than one part of the package reads or sets, each named once:
one side writes them into a container's environment, another reads them there."""

from __future__ import annotations

ROOT = "JAXCOURSE_ROOT"  # the course checkout (where jaxcourse.toml and solutions/ are)
CLASS_DIR = "JAXCOURSE_CLASS_DIR"  # a class's state on the hub's host: exchange, homes, gradebook
NUM_DEVICES = "JAXCOURSE_NUM_DEVICES"  # simulated CPU devices in a lab (default 8)
EXPECTED = "JAXCOURSE_EXPECTED"  # the release's shipped reference records, for a student's check
WORK_QUOTA = "JAXCOURSE_WORK_QUOTA"  # the most a student's work folder may hold, e.g. "2g"
QUOTA_EVERY = "JAXCOURSE_QUOTA_EVERY"  # seconds between the quota service's sweeps
