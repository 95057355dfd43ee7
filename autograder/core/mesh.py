"""Mesh specs such as ``8:i`` or ``2x4:x,y``, the devices they are laid over (an accelerator's
where it has enough, else simulated CPU devices beside it), and the mesh signature.

A submission and its reference must run on an identical mesh; the signature is the
plain-data description both sides write down and compare.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from math import prod
from typing import TYPE_CHECKING, Any

from . import environment
from .errors import JaxcourseError

if TYPE_CHECKING:
    import jax

# Every mesh in this course uses explicit axes: jax.make_mesh's default in the JAX the course pins
# (0.10.2), named here so that the choice is visible and part of the signature.
AXIS_TYPE = "Explicit"

_MESH_RE = re.compile(r"^(\d+(?:x\d+)*):([A-Za-z_]\w*(?:,[A-Za-z_]\w*)*)$")


class MeshSpecError(JaxcourseError, ValueError):
    """A mesh string that cannot be parsed."""


@dataclass(frozen=True)
class MeshSpec:
    """A mesh shape with axis names, parsed from ``"2x4:x,y"``."""

    shape: tuple[int, ...]
    names: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> MeshSpec:
        match = _MESH_RE.match(text.strip())
        if not match:
            raise MeshSpecError(f"bad mesh {text!r}: write sizes and axis names like '8:i' or '2x4:x,y'")
        shape = tuple(int(s) for s in match.group(1).split("x"))
        names = tuple(match.group(2).split(","))
        if len(shape) != len(names):
            raise MeshSpecError(f"bad mesh {text!r}: {len(shape)} sizes but {len(names)} axis names")
        if len(set(names)) != len(names):
            raise MeshSpecError(f"bad mesh {text!r}: axis names must differ")
        if any(s < 1 for s in shape):
            raise MeshSpecError(f"bad mesh {text!r}: axis sizes must be at least 1")
        return cls(shape, names)

    @property
    def size(self) -> int:
        return prod(self.shape)

    @property
    def axis_sizes(self) -> dict[str, int]:
        return dict(zip(self.names, self.shape))

    def __str__(self) -> str:
        return "x".join(map(str, self.shape)) + ":" + ",".join(self.names)

    def build(self) -> jax.sharding.Mesh:
        """The concrete mesh over the first ``size`` devices of the default backend (which
        ``use_devices`` chose in a notebook; the grader's processes run on CPU only)."""
        import jax
        from jax.sharding import AxisType

        devices = jax.devices()
        if len(devices) < self.size:
            raise MeshSpecError(
                f"mesh {self} needs {self.size} devices but JAX sees {len(devices)}; "
                "call autograder.mesh.use_devices(N) before JAX starts"
            )
        axis_type = getattr(AxisType, AXIS_TYPE)
        return jax.make_mesh(
            self.shape,
            self.names,
            axis_types=(axis_type,) * len(self.names),
            devices=devices[: self.size],
        )


def mesh_signature(mesh: jax.sharding.Mesh) -> dict[str, Any]:
    """Plain data that pins a mesh down: shape, names, axis types, device ids, platform."""
    devices = mesh.devices.flat
    return {
        "shape": [int(s) for s in mesh.devices.shape],
        "names": list(mesh.axis_names),
        "axis_types": [t.name for t in mesh.axis_types],
        "device_ids": [int(d.id) for d in devices],
        "platform": mesh.devices.flat[0].platform,
    }


def use_cpu_devices(count: int) -> None:
    """Ask JAX for ``count`` simulated CPU devices; must run before JAX starts its backends."""
    import jax

    if _backends_started():
        have = len(jax.devices())
        if have < count:
            raise MeshSpecError(
                f"JAX already started with {have} devices; {count} are needed. "
                "Restart the kernel and run the setup cell first."
            )
        return
    jax.config.update("jax_num_cpu_devices", count)


CHOICES = ("auto", "accelerator", "cpu")
PROBE_SECONDS = 120  # a GPU's first start (driver, plugin) can take a minute on a cold machine


@dataclass(frozen=True)
class Accelerators:
    """What JAX would start on, seen from a child process: how many devices, of which platform and kind."""

    count: int
    platform: str = ""
    kind: str = ""

    def __str__(self) -> str:
        plural = "s" * (self.count != 1)
        return f"{self.count} {self.platform.upper()} device{plural}" if self.count else "no accelerator"


@dataclass(frozen=True)
class DeviceChoice:
    """Which devices a notebook's meshes use (``accelerator`` or ``cpu``), and the one line that
    tells the student which and why."""

    kind: str
    line: str


def choose_devices(count: int, found: Accelerators, want: str = "auto") -> DeviceChoice:
    """The accelerator where it has ``count`` devices, else simulated CPU devices; ``want``
    (``JAXCOURSE_DEVICES``) forces either. A course's meshes need ``count`` devices whatever the host."""
    if want not in CHOICES:
        raise MeshSpecError(f"{environment.DEVICES}={want!r}: write auto, accelerator or cpu")
    if want != "cpu" and found.count >= count:
        return DeviceChoice(
            "accelerator",
            f"The course's {count} devices: {count} of this host's {found.count} {found.kind} devices "
            f"({environment.DEVICES}=cpu runs on simulated CPU devices instead).",
        )
    if want == "accelerator":
        raise MeshSpecError(
            f"{environment.DEVICES}=accelerator, but this host has {found} and the course's meshes need "
            f"{count}: unset it to run on simulated CPU devices"
        )
    why = (
        f"{environment.DEVICES}=cpu"
        if want == "cpu"
        else "this host has no accelerator"
        if not found.count
        else f"this host has {found}, fewer than the {count} the course's meshes need"
    )
    return DeviceChoice("cpu", f"The course's {count} devices: simulated CPU devices, as {why}.")


def use_devices(count: int) -> DeviceChoice:
    """Choose a notebook's devices before JAX starts, so that JAX starts on them alone: on simulated
    CPU devices (``jax_platforms=cpu``), every ``jax.devices()`` and mesh of a lecture lists those,
    never a platform with too few; on an accelerator with more than ``count`` GPUs, the first
    ``count``."""
    import jax

    if _backends_started():  # the setup cell run again: JAX keeps the devices it started on
        devices = jax.devices()
        if len(devices) < count:
            raise MeshSpecError(
                f"JAX already started with {len(devices)} devices; {count} are needed. "
                "Restart the kernel and run the setup cell first."
            )
        platform = devices[0].platform
        return DeviceChoice(
            "cpu" if platform == "cpu" else "accelerator",
            f"The course's {count} devices: JAX has already started, on {len(devices)} {platform.upper()} devices.",
        )
    found = accelerators()
    choice = choose_devices(count, found, os.environ.get(environment.DEVICES, "auto"))
    jax.config.update("jax_num_cpu_devices", count)
    if choice.kind == "cpu":
        jax.config.update("jax_platforms", "cpu")
    elif found.platform == "gpu" and found.count > count:
        jax.config.update("jax_cuda_visible_devices", ",".join(map(str, range(count))))
    return choice


_PROBE = (
    "import json, jax; d = jax.devices(); "
    "print(json.dumps([len(d), d[0].platform, d[0].device_kind] if d[0].platform != 'cpu' else [0]))"
)


def accelerators() -> Accelerators:
    """The accelerator JAX would start on, asked of a child process (this one must still choose
    its platform); none without asking where no accelerator can be present: ``JAX_PLATFORMS=cpu``,
    or no accelerator plugin installed."""
    import json
    import subprocess
    import sys

    if not _accelerator_possible():
        return Accelerators(0)
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES")}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, timeout=PROBE_SECONDS
        )
        return Accelerators(*json.loads(done.stdout.strip().splitlines()[-1]))
    except (subprocess.TimeoutExpired, IndexError, ValueError, TypeError):
        return Accelerators(0)  # an accelerator that cannot start is no accelerator for the course


def _accelerator_possible() -> bool:
    import importlib.metadata
    import importlib.util

    if os.environ.get("JAX_PLATFORMS", "").strip().lower() == "cpu":
        return False
    plugins = importlib.metadata.entry_points(group="jax_plugins")
    return bool(plugins) or any(importlib.util.find_spec(name) for name in ("jax_plugins", "libtpu"))


def _backends_started() -> bool:
    from jax._src import xla_bridge

    return xla_bridge.backends_are_initialized()


def default_device_count() -> int:
    """Simulated CPU devices for the course: ``JAXCOURSE_NUM_DEVICES`` or 8."""
    raw = os.environ.get(environment.NUM_DEVICES, "8")
    try:
        count = int(raw)
    except ValueError:
        raise MeshSpecError(f"JAXCOURSE_NUM_DEVICES={raw!r} is not a whole number") from None
    if count < 1:
        raise MeshSpecError(f"JAXCOURSE_NUM_DEVICES={raw!r} must be at least 1")
    return count
