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
        """The concrete mesh over the first ``size`` of the course's devices (``course_devices``)."""
        import jax
        from jax.sharding import AxisType

        devices = course_devices()
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
            devices=list(devices[: self.size]),
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


@dataclass(frozen=True)
class DeviceChoice:
    """The devices a notebook's meshes use, and the one line that tells the student which and why."""

    devices: tuple[Any, ...]
    line: str


def choose_devices(count: int, accelerators: list[Any], cpus: list[Any], want: str = "auto") -> DeviceChoice:
    """The accelerator's devices where it has ``count`` of them, else simulated CPU devices; ``want``
    (``JAXCOURSE_DEVICES``) forces either. A course's meshes need ``count`` devices whatever the host."""
    if want not in CHOICES:
        raise MeshSpecError(f"{environment.DEVICES}={want!r}: write auto, accelerator or cpu")
    have = f"{len(accelerators)} {accelerators[0].platform.upper()}" if accelerators else "no accelerator"
    if want != "cpu" and len(accelerators) >= count:
        kind = accelerators[0].device_kind
        return DeviceChoice(
            tuple(accelerators[:count]),
            f"The course's {count} devices: {count} of this host's {len(accelerators)} {kind} devices "
            f"({environment.DEVICES}=cpu runs on simulated CPU devices instead).",
        )
    if want == "accelerator":
        raise MeshSpecError(
            f"{environment.DEVICES}=accelerator, but this host has {have} devices and the course's meshes need "
            f"{count}: unset it to run on simulated CPU devices"
        )
    if len(cpus) < count:
        raise MeshSpecError(
            f"JAX already started with {len(cpus)} CPU devices; {count} are needed. "
            "Restart the kernel and run the setup cell first."
        )
    why = (
        f"{environment.DEVICES}=cpu"
        if want == "cpu"
        else "this host has no accelerator"
        if not accelerators
        else f"this host has {have} device{'s' * (len(accelerators) > 1)}, fewer than the {count} the course's meshes need"
    )
    return DeviceChoice(tuple(cpus[:count]), f"The course's {count} devices: simulated CPU devices, as {why}.")


_chosen: tuple[Any, ...] = ()


def use_devices(count: int) -> DeviceChoice:
    """Give a notebook its ``count`` devices (``choose_devices``): simulated CPU devices are asked
    for before JAX starts, so that they are there beside an accelerator that has too few; computations
    that name no device then run on the chosen ones."""
    import jax

    global _chosen
    if not _backends_started():
        jax.config.update("jax_num_cpu_devices", count)
    accelerators = [d for d in jax.devices() if d.platform != "cpu"]
    choice = choose_devices(count, accelerators, jax.devices("cpu"), os.environ.get(environment.DEVICES, "auto"))
    if accelerators and choice.devices[0].platform == "cpu":
        jax.config.update("jax_default_device", choice.devices[0])
    _chosen = choice.devices
    return choice


def course_devices() -> tuple[Any, ...]:
    """The devices meshes are laid over: those ``use_devices`` chose, else the default backend's
    (the grader's processes run on CPU only, ``JAX_PLATFORMS=cpu``)."""
    import jax

    return _chosen or tuple(jax.devices())


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
