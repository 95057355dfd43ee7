#!/bin/sh
# Start a test node's engine. Its containers go under a cgroup of their own (the host's cgroup
# tree is shared), named after the node; the engine's state is in the /var/lib/docker volume.
set -eu
name="${JAXCOURSE_NODE:?set JAXCOURSE_NODE to the node name (engine/swarm.py does)}"
exec dockerd --cgroup-parent "/jaxcourse-${name}" --host unix:///var/run/docker.sock \
    --storage-driver overlay2 --log-level warn
