#!/opt/venv/bin/python
"""Print one line saying which platform JAX found in this container.

A student who starts the cuda or tpu image on a laptop gets CPU silently from JAX (a warning
lost in the server log); this line, shown by `jaxcourse lab`, says so plainly and what to do.
"""

from __future__ import annotations

import logging
import os
import sys

from autograder.core import environment

EXPECTED = {"cpu": "cpu", "cuda": "gpu", "tpu": "tpu"}
HOW = {
    "cuda": "on a host with an NVIDIA driver, start it with `jaxcourse lab --variant cuda` (or docker run --gpus all)",
    "tpu": "on a Cloud TPU VM, start it with `jaxcourse lab --variant tpu` (or docker run --privileged --net=host)",
}


def main() -> int:
    variant = os.environ.get(environment.VARIANT, "cpu")
    # JAX's own fallback warning is a traceback; the line below says the same in words.
    logging.getLogger("jax._src.xla_bridge").setLevel(logging.CRITICAL)
    try:
        import jax

        devices = jax.devices()
    except Exception as exc:  # any backend failure is the message we exist to print
        print(f"jaxcourse: JAX failed to start in the {variant} image: {exc}", flush=True)
        return 1
    platform = devices[0].platform
    found = f"JAX {jax.__version__} found {len(devices)} {platform} device(s) ({devices[0].device_kind})"
    expected = EXPECTED.get(variant, "cpu")
    if platform == expected:
        print(f"jaxcourse: {variant} image: {found}", flush=True)
    else:
        print(
            f"jaxcourse: {variant} image but no {expected.upper()} visible: {found}; falling back "
            f"to CPU. For the real thing, {HOW.get(variant, 'use the matching image')}.",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
