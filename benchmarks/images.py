"""Student images, measured: size, start to healthy (warm and from a cold, slow disk), and the
first cell of a released notebook.

    python benchmarks/images.py [--variants cpu,cuda,tpu] [--runs 3] [--cold-mbps 10] [--build]

Targets (cpu image, the one students run on laptops): at most 1.3 GB, healthy within 5 s of
`docker run`, and within 12 s from a cold page cache on a disk read at 10 MB/s (a first start after
`docker pull`; CI's shared disk once took 25 s). The cold starts need root (they drop the page
cache and throttle the container's reads); elsewhere they are skipped, saying so. Exits non-zero
when the cpu image misses a target. Without --build it measures the images already built
(`jaxcourse image build --variant ...`) and skips variants that are absent.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from docker.models.containers import Container

from autograder.delivery import lab
from autograder.engine import images
from autograder.engine.containers import running

SIZE_TARGET_GB = 1.3
HEALTHY_TARGET_S = 5.0
COLD_TARGET_S = 12.0

# Runs inside the container: kernel start and the first code cell of the first released notebook.
FIRST_CELL = """
import glob, json, time, nbformat
from nbclient import NotebookClient
path = sorted(glob.glob('/opt/jaxcourse/seed/assignments/*/*.ipynb'))[0]
nb = nbformat.read(path, as_version=4)
client = NotebookClient(nb, timeout=600, kernel_name='python3')
start = time.perf_counter()
with client.setup_kernel():
    up = time.perf_counter()
    index = next(i for i, c in enumerate(nb.cells) if c.cell_type == 'code')
    client.execute_cell(nb.cells[index], index)
    done = time.perf_counter()
print(json.dumps({'notebook': path, 'kernel_s': up - start, 'first_cell_s': done - up}))
"""


def docker_disk(client) -> str | None:
    """The whole disk under Docker's data root (blkio throttles disks, not partitions); None where
    this machine cannot say (Docker Desktop's VM)."""
    try:
        st = os.stat(client.info()["DockerRootDir"])
    except OSError:
        return None
    block = os.path.realpath(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if os.path.exists(os.path.join(block, "partition")):
        block = os.path.dirname(block)
    disk = f"/dev/{os.path.basename(block)}"
    return disk if os.path.exists(disk) else None


def cold_start_options(client, mbps: int) -> tuple[dict | None, str]:
    """Options that make a start read its image from a slow disk, or None and why not."""
    if mbps <= 0:
        return None, "not asked for (--cold-mbps 0)"
    disk = docker_disk(client)
    if os.geteuid() != 0 or disk is None:
        return None, "skipped: needs root and Docker's disk on this machine"
    return {"device_read_bps": [{"Path": disk, "Rate": mbps * 1024 * 1024}]}, f"reads from {disk} at {mbps} MB/s"


def drop_page_cache() -> None:
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


@contextmanager
def started(client, image: str, **options) -> Iterator[tuple[Container, float]]:
    """A lab container once healthy, and the seconds from `docker run` to healthy."""
    start = time.monotonic()
    with running(client, image=image, environment={"JUPYTER_TOKEN": "bench"}, **options) as container:
        lab.wait_healthy(container)
        yield container, time.monotonic() - start


def measure(client, variant: str, runs: int, cold: dict | None) -> dict:
    image = images.tag(variant)
    result: dict = {
        "variant": variant,
        "size_gb": images.image_size(client, image) / 1e9,
        "cold_s": [],
        "healthy_s": [],
    }
    for _ in range(runs if cold is not None else 0):
        drop_page_cache()
        with started(client, image, **(cold or {})) as (_, seconds):  # `or {}`: for the type checker
            result["cold_s"].append(seconds)
    for run in range(runs):
        with started(client, image) as (container, seconds):
            result["healthy_s"].append(seconds)
            if run == 0:
                code, out = container.exec_run(["python", "-c", FIRST_CELL])
                if code != 0:
                    raise SystemExit(
                        f"benchmarks/images.py: error: first cell failed in {image}: {out.decode()[-500:]}"
                    )
                result |= json.loads(out.decode().strip().splitlines()[-1])
    return result


def spread(seconds: list[float]) -> str:
    if not seconds:
        return "-"
    return f"{statistics.median(seconds):.2f} ({min(seconds):.2f}-{max(seconds):.2f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="cpu,cuda,tpu")
    parser.add_argument("--runs", type=int, default=3, help="container starts per variant (default 3)")
    parser.add_argument("--cold-mbps", type=int, default=10, help="disk read rate of the cold starts (0: none)")
    parser.add_argument("--build", action="store_true", help="build each variant first and time it")
    args = parser.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    unknown = set(variants) - set(images.VARIANTS)
    if unknown or args.runs < 1:
        raise SystemExit(f"benchmarks/images.py: error: variants are {', '.join(images.VARIANTS)}; runs >= 1")
    try:
        client = images.connect()
    except images.EngineUnavailable as err:
        raise SystemExit(f"benchmarks/images.py: error: {err}") from None
    cold, cold_how = cold_start_options(client, args.cold_mbps)
    print(f"cold starts: {cold_how}")

    rows = []
    for variant in variants:
        build_s = None
        if args.build:
            start = time.monotonic()
            images.build(variant, client=client)
            build_s = time.monotonic() - start
        elif not client.images.list(name=images.tag(variant)):
            print(f"{variant}: no {images.tag(variant)} image; skipped (build it, or pass --build)")
            continue
        row = measure(client, variant, args.runs, cold)
        row["build_s"] = build_s
        rows.append(row)

    print(
        f"\n{'variant':8} {'size GB':>8} {'build s':>8} {'healthy s (median, min-max)':>29}"
        f" {'cold s (median, min-max)':>26} {'kernel s':>9} {'1st cell s':>11}"
    )
    for r in rows:
        build = f"{r['build_s']:.0f}" if r["build_s"] is not None else "-"
        print(
            f"{r['variant']:8} {r['size_gb']:8.2f} {build:>8} {spread(r['healthy_s']):>29} {spread(r['cold_s']):>26}"
            f" {r['kernel_s']:9.2f} {r['first_cell_s']:11.2f}"
        )
    missed = []
    for r in rows:
        if r["variant"] == "cpu":
            if r["size_gb"] > SIZE_TARGET_GB:
                missed.append(f"cpu image {r['size_gb']:.2f} GB > {SIZE_TARGET_GB} GB")
            if statistics.median(r["healthy_s"]) > HEALTHY_TARGET_S:
                missed.append(f"cpu healthy after {statistics.median(r['healthy_s']):.2f} s > {HEALTHY_TARGET_S} s")
            if r["cold_s"] and statistics.median(r["cold_s"]) > COLD_TARGET_S:
                missed.append(
                    f"cpu healthy from a cold disk after {statistics.median(r['cold_s']):.2f} s > {COLD_TARGET_S} s"
                )
    met = f"met (cpu <= {SIZE_TARGET_GB} GB, healthy <= {HEALTHY_TARGET_S} s, cold <= {COLD_TARGET_S} s or skipped)"
    print("\ntargets: " + ("; ".join(missed) if missed else met))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
