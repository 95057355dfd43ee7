#!/bin/bash
# Exit 0 when the notebook server answers: the image's HEALTHCHECK, and what start.sh waits for
# before anything else may read the disk. GET /api is the one unauthenticated Jupyter endpoint;
# bash's /dev/tcp keeps the probe cheap enough to run every second.
# JUPYTER_PORT moves server and probe together (TPU VMs run with the host's network); under
# JupyterHub the server's API lives under its prefix (/user/<name>/api).
exec 3<>"/dev/tcp/127.0.0.1/${JUPYTER_PORT:-8888}" 2>/dev/null || exit 1
printf 'GET %sapi HTTP/1.0\r\n\r\n' "${JUPYTERHUB_SERVICE_PREFIX:-/}" >&3
head -n1 <&3 | grep -q ' 200 '
