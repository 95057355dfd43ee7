"""The class's environment variables, each named once: the hub's deployment writes them into its
services' and students' containers, the hub's config and the services read them there.

The core's names, which the class writes too (the checkout's root, a lab's work folder), come with
them, so a module of the class imports one ``environment``."""

from __future__ import annotations

from autograder.core.environment import *  # noqa: F403  (the core's names, re-exported)

CLASS_DIR = "JAXCOURSE_CLASS_DIR"  # a class's state on the hub's host: exchange, homes, gradebook
WORK_QUOTA = "JAXCOURSE_WORK_QUOTA"  # the most a student's work folder may hold, e.g. "2g"
QUOTA_EVERY = "JAXCOURSE_QUOTA_EVERY"  # seconds between the quota service's sweeps
EXCHANGE_URL = "JAXCOURSE_EXCHANGE_URL"  # the class exchange service's URL, set in each student's server by the hub
EXCHANGE_BIND = "JAXCOURSE_EXCHANGE_BIND"  # the address the exchange service listens on
EXCHANGE_TLS = "JAXCOURSE_EXCHANGE_TLS"  # on a swarm: the hub's certificate store; servers reach the exchange by TLS
EXCHANGE_TLS_PORT = "JAXCOURSE_EXCHANGE_TLS_PORT"  # ... at this port, while the proxy keeps plain HTTP on loopback
CONFIG_DIR = "JAXCOURSE_CONFIG_DIR"  # the exchange service's configuration folder (the course's jaxcourse.toml)
INSTRUCTOR = "JAXCOURSE_INSTRUCTOR"  # set in an instructor's server: the class directory is nbgrader's course root
CLASS = "JAXCOURSE_CLASS"  # an instructor's server's class directory (gradebook, submissions)
BROKER = "JAXCOURSE_BROKER"  # where a queue worker or the grading service finds the broker's URL
BROKER_CA = "JAXCOURSE_BROKER_CA"  # the CA a rediss:// broker's certificate is checked against
QUEUE_KEY = "JAXCOURSE_QUEUE_KEY"  # the key the queue's outcomes are signed with
HUB_NAME = "JAXCOURSE_HUB_NAME"  # the hub container's name on the class network
NETWORK = "JAXCOURSE_NETWORK"  # the class network the hub and its services share
IMAGE = "JAXCOURSE_IMAGE"  # the image students' servers run
PREFIX = "JAXCOURSE_PREFIX"  # students' containers are named PREFIX-<username>
COURSE_ROOT = "JAXCOURSE_COURSE_ROOT"  # the instructor's checkout, mounted in instructors' servers
CLASS_NAME = "JAXCOURSE_CLASS_NAME"  # the name that labels everything a class owns
SERVER_SUBNETS = "JAXCOURSE_SERVER_SUBNETS"  # the network each student's server's own /28 is taken from
PUBLIC_URL = "JAXCOURSE_PUBLIC_URL"  # the class's address as its users reach it
MEM_LIMIT = "JAXCOURSE_MEM_LIMIT"  # each student's server's memory
MEM_RESERVED = "JAXCOURSE_MEM_RESERVED"  # across a swarm, the memory each server reserves on its node
CPU_LIMIT = "JAXCOURSE_CPU_LIMIT"  # each student's server's CPU quota
PIDS_LIMIT = "JAXCOURSE_PIDS_LIMIT"  # each student's server's processes and threads
IDLE_TIMEOUT = "JAXCOURSE_IDLE_TIMEOUT"  # seconds before an idle server is stopped
NODE_IMAGE_FILE = "JAXCOURSE_NODE_IMAGE_FILE"  # across a swarm, a file naming the student image as nodes pull it
SWARM_HOMES = "JAXCOURSE_SWARM_HOMES"  # where each node mounts the class's homes: students' servers are Swarm services
SWARM_ENCRYPTED = "JAXCOURSE_SWARM_ENCRYPTED"  # 1: students' overlay networks are encrypted (the kernel has ESP)
SCRATCH = "JAXCOURSE_SCRATCH"  # each server's home and /tmp, in memory
