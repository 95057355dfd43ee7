#!/bin/bash
# Container entrypoint (under tini): prepare the student's session, then run the command
# (JupyterLab by default, jupyterhub-singleuser under JupyterHub).
set -euo pipefail

# The simulated device count is the course's knob; JAX reads JAX_NUM_CPU_DEVICES at start-up.
export JAX_NUM_CPU_DEVICES="${JAXCOURSE_NUM_DEVICES:-8}"

# An instructor's server on the class hub: nbgrader's formgrader and course list come on.
if [ -n "${JAXCOURSE_INSTRUCTOR:-}" ]; then
    export JUPYTER_CONFIG_PATH="/opt/jaxcourse/jupyter-instructor:${JUPYTER_CONFIG_PATH}"
fi

# Run as another uid (docker run --user), the image's home is not ours to write.
if [ ! -w "$HOME" ]; then
    export HOME=/tmp/home
    mkdir -p "$HOME"
fi

# Copy lectures and released assignments into the work dir; never over a file the student changed.
# On a class hub, assignments come from the class's exchange (Fetch), not from the image.
python -m autograder.delivery.lab seed /opt/jaxcourse/seed "$JAXCOURSE_WORK" ${JAXCOURSE_EXCHANGE_URL:+--class} \
    || echo "jaxcourse: could not fill $JAXCOURSE_WORK; the course files are in /opt/jaxcourse/seed" >&2

# Say which platform JAX found (a cuda or tpu image on a laptop falls back to CPU) once the server
# answers: on a cold, slow disk, importing JAX (jaxlib alone is 350 MB) beside the server's own
# imports made the server 4.3x slower to answer (benchmarks/images.py, "cold"). A command that
# never serves gets the line after a minute.
(for _ in $(seq 60); do jaxcourse-healthy && break; sleep 1; done; jaxcourse-platform) &

cd "$JAXCOURSE_WORK"
exec "$@"
