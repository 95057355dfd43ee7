#!/usr/bin/env bash
# Download, hash-checked, the wheels `make venv` installs (requirements/dev.lock and lint.lock)
# for another Python on Linux x86-64, into a folder a container with no network installs from
# (PIP_NO_INDEX=1, PIP_FIND_LINKS=the folder). For the test that builds the course's environment
# on Debian 13's Python 3.13 (tests/docker/test_python313.py); CI's setup calls it.
#
# Usage: docker/wheelhouse.sh [PYTHON_VERSION [FOLDER]]   (default 3.13 /var/cache/jaxcourse/wheels-py3.13)
# Reuses the folder when it already holds the wheels of these exact locks.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="${1:-3.13}"
folder="${2:-/var/cache/jaxcourse/wheels-py$version}"
locks=("$here/../requirements/dev.lock" "$here/../requirements/lint.lock")
case "$version" in
  3.1[1-9]) ;;
  *) echo "wheelhouse.sh: error: a Python version like 3.13, not '$version'" >&2; exit 2 ;;
esac

stamp="$folder/.locks-$(cat "${locks[@]}" | sha256sum | cut -c1-16)"
if [ -e "$stamp" ]; then
  echo "wheelhouse: reusing $folder"
  exit 0
fi
mkdir -p "$folder"
rm -f "$folder"/.locks-*
# Every manylinux tag Debian 13's glibc (2.41) runs: pip matches a --platform tag exactly.
platforms=(--platform manylinux1_x86_64 --platform manylinux2010_x86_64 --platform manylinux2014_x86_64)
for minor in 5 12 17 24 26 27 28 31 34 35 36 38 39 40 41; do
  platforms+=(--platform "manylinux_2_${minor}_x86_64")
done
start=$SECONDS
python3 -m pip download --quiet --disable-pip-version-check --require-hashes --no-deps --only-binary=:all: \
  --python-version "$version" --implementation cp "${platforms[@]}" -d "$folder" \
  -r "${locks[0]}" -r "${locks[1]}"
touch "$stamp"
echo "wheelhouse: $(find "$folder" -name '*.whl' | wc -l) wheels for Python $version in $folder ($(du -sh "$folder" | cut -f1), $((SECONDS - start)) s)"
