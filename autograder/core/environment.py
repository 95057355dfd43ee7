"""The core's environment variables, each named once: one side (the CLI, a lab's image) writes
them into a process's or a container's environment, another (a lab, a sandbox's runner) reads
them there. The class's own (a hub's, a swarm's, the queue's) are in ``classroom.environment``."""

from __future__ import annotations

ROOT = "JAXCOURSE_ROOT"  # the course checkout (where jaxcourse.toml and solutions/ are)
NUM_DEVICES = "JAXCOURSE_NUM_DEVICES"  # simulated CPU devices in a lab (default 8)
DEVICES = "JAXCOURSE_DEVICES"  # which devices a notebook's meshes use: auto (default), accelerator or cpu
EXPECTED = "JAXCOURSE_EXPECTED"  # the release's shipped reference records, for a student's check
WORK = "JAXCOURSE_WORK"  # a lab's work folder on the host volume, where students' files live
VARIANT = "JAXCOURSE_VARIANT"  # the image's variant: cpu, cuda or tpu
COURSE_ID = "JAXCOURSE_COURSE_ID"  # nbgrader's course id in a lab or a class
EXCHANGE = "JAXCOURSE_EXCHANGE"  # a lab's own exchange folder, when no hub serves one
SANDBOX = "JAXCOURSE_SANDBOX"  # the sandbox `jaxcourse grade` uses when --sandbox is not given
XLA_FLAGS = "JAXCOURSE_XLA_FLAGS"  # a sandbox's runner: "<jaxlib version> <XLA_FLAGS>" that this jaxlib knows
OFFLINE_BASE = "JAXCOURSE_OFFLINE_BASE"  # the offline base image the course's images are built from
