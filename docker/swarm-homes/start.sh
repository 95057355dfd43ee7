#!/bin/sh
# The keys come mounted read-only from the class's secrets, owned by whoever owns the class: sshd
# wants its host key owned by root, and reads authorized_keys as jovyan, so each is copied with
# the owner and mode sshd checks for.
set -eu
keys=/etc/jaxcourse/homes
[ -f "$keys/host_key" ] && [ -f "$keys/node_key.pub" ] || {
    echo "jaxcourse-homes: error: mount the class's secrets/homes at $keys (jaxcourse hub up --swarm does)" >&2
    exit 2
}
mkdir -p /run/jaxcourse-homes /run/sshd
install -m 0600 -o root -g root "$keys/host_key" /run/jaxcourse-homes/host_key
install -m 0644 -o root -g root "$keys/node_key.pub" /run/jaxcourse-homes/authorized_keys
exec /usr/sbin/sshd -D -e
