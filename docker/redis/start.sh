#!/bin/sh
# Start Redis for the grading queue: a password, the append-only file in /data, no RDB snapshots.
set -eu
if [ -z "${REDIS_PASSWORD:-}" ]; then
    echo "jaxcourse-redis: error: set REDIS_PASSWORD (jaxcourse hub up does)" >&2
    exit 2
fi
exec redis-server --bind 0.0.0.0 --port 6379 --protected-mode yes --requirepass "$REDIS_PASSWORD" \
    --dir /data --appendonly yes --appendfsync always --save "" --loglevel warning
