#!/usr/bin/env bash
# Build a stand-in for python:3.11-slim from Debian packages, for machines that reach no image
# registry (CI, air-gapped labs). Debian bookworm ships Python 3.11, so debootstrap + `docker
# import` gives an equivalent base: python3 with venv, tini, CA certificates, apt. With
# `--suite trixie` the same recipe gives Debian 13's Python 3.13, plus make, for the test that
# builds the course's environment there as a student on Debian 13 would (`make venv`).
#
# Usage (as root): docker/build-offline-base.sh [--rebuild] [--suite bookworm|trixie]
# Env: JAXCOURSE_OFFLINE_BASE (the bookworm image's tag), DEBIAN_MIRROR (default
# http://deb.debian.org/debian). The image is reused when it already exists, unless --rebuild.
set -euo pipefail

mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
rebuild=0
suite=bookworm
while [ $# -gt 0 ]; do
  case "$1" in
    --rebuild) rebuild=1 ;;
    --suite)
      suite="${2:-}"
      shift
      ;;
    *) echo "build-offline-base.sh: error: unknown argument $1 (--rebuild, --suite bookworm|trixie)" >&2; exit 2 ;;
  esac
  shift
done
case "$suite" in
  bookworm) python=3.11 extra="" tag="${JAXCOURSE_OFFLINE_BASE:-jaxcourse/offline-base:bookworm-py3.11}" ;;
  trixie) python=3.13 extra=",make" tag="jaxcourse/offline-base:trixie-py3.13" ;;
  *) echo "build-offline-base.sh: error: --suite is bookworm (Python 3.11) or trixie (3.13), not '$suite'" >&2; exit 2 ;;
esac

# The image remembers the recipe it came from: editing this script rebuilds it.
recipe="$(sha256sum "$0" | cut -c1-16)"
have="$(docker image inspect -f '{{index .Config.Labels "org.jaxcourse.recipe"}}' "$tag" 2>/dev/null || true)"
if [ "$rebuild" = 0 ] && [ "$have" = "$recipe" ]; then
  echo "offline base: reusing $tag"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "build-offline-base.sh: error: debootstrap needs root" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap
fi

root="$(mktemp -d /var/tmp/jaxcourse-base.XXXXXX)"
trap 'rm -rf "$root" "$root.log"' EXIT

start=$SECONDS
# libnss-myhostname: the container's own hostname resolves even under --network none, which
# gloo (JAX's multi-process CPU collectives) needs.
debootstrap --variant=minbase --include="python3,python3-venv,tini,ca-certificates,libnss-myhostname$extra" \
  "$suite" "$root" "$mirror" >"$root.log" 2>&1 || { tail -20 "$root.log" >&2; exit 1; }

# What python:3.11-slim leaves out too: apt lists, docs, man pages, translations, caches.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
  "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
  "$root"/usr/share/locale/* "$root"/var/log/*.log "$root"/tmp/* "$root"/root/.cache
echo "deb $mirror $suite-updates main" >>"$root/etc/apt/sources.list"
echo "deb http://deb.debian.org/debian-security $suite-security main" >>"$root/etc/apt/sources.list"

tar -C "$root" --numeric-owner -c . | docker import \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["python3"]' \
  --change "LABEL org.jaxcourse.recipe=$recipe" \
  --message "debootstrap $suite minbase + python$python, venv, tini, ca-certificates, libnss-myhostname$extra" \
  - "$tag" >/dev/null
echo "offline base: built $tag in $((SECONDS - start)) s ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'))"
