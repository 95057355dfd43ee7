#!/bin/sh
# Start Redis for the grading queue: a password (REDIS_PASSWORD, or the file REDIS_PASSWORD_FILE
# names), the append-only file in /data, no RDB snapshots.
# With REDIS_TLS_DIR (a class whose queue crosses hosts), port 6379 speaks TLS only, with the
# certificate in that folder (redis.pem, redis-key.pem); clients need no certificate of their own.
set -eu
if [ -n "${REDIS_PASSWORD_FILE:-}" ]; then  # a Swarm secret (hub up --swarm)
    REDIS_PASSWORD="$(cat "$REDIS_PASSWORD_FILE")"
fi
if [ -z "${REDIS_PASSWORD:-}" ]; then
    echo "jaxcourse-redis: error: set REDIS_PASSWORD or REDIS_PASSWORD_FILE (jaxcourse hub up does)" >&2
    exit 2
fi
if [ -n "${REDIS_TLS_DIR:-}" ]; then
    set -- --port 0 --tls-port 6379 --tls-cert-file "$REDIS_TLS_DIR/redis.pem" \
        --tls-key-file "$REDIS_TLS_DIR/redis-key.pem" --tls-ca-cert-file "$REDIS_TLS_DIR/ca.pem" \
        --tls-auth-clients no
else
    set -- --port 6379
fi
exec redis-server --bind 0.0.0.0 "$@" --protected-mode yes --requirepass "$REDIS_PASSWORD" \
    --dir /data --appendonly yes --appendfsync always --save "" --loglevel warning
