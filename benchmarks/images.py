"""Student images, measured: size, start to healthy, and the first cell of a released notebook.

    python benchmarks/images.py [--variants cpu,cuda,tpu] [--runs 3] [--build]

Targets (cpu image, the one students run on laptops): at most 1.3 GB, healthy within 5 s of
`docker run`. Exits non-zero when the cpu image misses one. Without --build it measures the
images already built (`jaxcourse image build --variant ...`) and skips variants that are absent.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from autograder.delivery import lab
from autograder.engine import images

SIZE_TARGET_GB = 1.3
HEALTHY_TARGET_S = 5.0

# Runs inside the container: kernel start and the first code cell of the first released notebook.
FIRST_CELL = """
import glob, json, time, nbformat
from nbclient import NotebookClient
path = sorted(p for p in glob.glob('/opt/jaxcourse/seed/*/*.ipynb') if '/lectures/' not in p)[0]
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


def measure(client, variant: str, runs: int) -> dict:
    image = images.tag(variant)
    result: dict = {"variant": variant, "size_gb": images.image_size(client, image) / 1e9, "healthy_s": []}
    for run in range(runs):
        start = time.monotonic()
        container = client.containers.run(image, detach=True, environment={"JUPYTER_TOKEN": "bench"})
        try:
            lab.wait_healthy(container)
            result["healthy_s"].append(time.monotonic() - start)
            if run == 0:
                code, out = container.exec_run(["python", "-c", FIRST_CELL])
                if code != 0:
                    raise SystemExit(
                        f"benchmarks/images.py: error: first cell failed in {image}: {out.decode()[-500:]}"
                    )
                result |= json.loads(out.decode().strip().splitlines()[-1])
        finally:
            container.remove(force=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="cpu,cuda,tpu")
    parser.add_argument("--runs", type=int, default=3, help="container starts per variant (default 3)")
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
        row = measure(client, variant, args.runs)
        row["build_s"] = build_s
        rows.append(row)

    print(
        f"\n{'variant':8} {'size GB':>8} {'build s':>8} {'healthy s (median, min-max)':>29} {'kernel s':>9} {'1st cell s':>11}"
    )
    for r in rows:
        h = r["healthy_s"]
        build = f"{r['build_s']:.0f}" if r["build_s"] is not None else "-"
        spread = f"{statistics.median(h):.2f} ({min(h):.2f}-{max(h):.2f})"
        print(
            f"{r['variant']:8} {r['size_gb']:8.2f} {build:>8} {spread:>29} {r['kernel_s']:9.2f} {r['first_cell_s']:11.2f}"
        )
    missed = []
    for r in rows:
        if r["variant"] == "cpu":
            if r["size_gb"] > SIZE_TARGET_GB:
                missed.append(f"cpu image {r['size_gb']:.2f} GB > {SIZE_TARGET_GB} GB")
            if statistics.median(r["healthy_s"]) > HEALTHY_TARGET_S:
                missed.append(f"cpu healthy after {statistics.median(r['healthy_s']):.2f} s > {HEALTHY_TARGET_S} s")
    print(
        "\ntargets: "
        + ("; ".join(missed) if missed else f"met (cpu <= {SIZE_TARGET_GB} GB, healthy <= {HEALTHY_TARGET_S} s)")
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
