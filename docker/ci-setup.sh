#!/usr/bin/env bash
# Prepare a CI machine (Debian, as root) for the Docker tests: a running engine, headless chromium
# for the browser test, and the offline base image (registries are unreachable there); for the
# cluster tests Slurm, munge and Open MPI (the tests start `jaxcourse cluster up` themselves); and
# for the Python 3.13 test, Debian 13's base and the locks' wheels for 3.13, which it installs
# with no network.
# Idempotent: each step is skipped when already done. Called by `make test` under CI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

if [ "$(id -u)" != 0 ]; then
  echo "ci-setup.sh: error: run as root (it installs packages and starts dockerd)" >&2
  exit 1
fi

missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v chromium >/dev/null || missing+=(chromium)
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v slurmd >/dev/null || missing+=(slurm-wlm)
command -v munged >/dev/null || missing+=(munge)
command -v mpirun >/dev/null || missing+=(openmpi-bin)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "ci-setup: installing ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  echo "ci-setup: starting dockerd (log: /var/log/dockerd.log)"
  nohup dockerd >/var/log/dockerd.log 2>&1 &
  for _ in $(seq 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  if ! docker info >/dev/null 2>&1; then
    echo "ci-setup.sh: error: dockerd did not come up in 60 s; its log ends:" >&2
    tail -n 20 /var/log/dockerd.log >&2
    exit 1
  fi
fi

"$here/build-offline-base.sh"
"$here/build-offline-base.sh" --suite trixie
"$here/wheelhouse.sh" 3.13
