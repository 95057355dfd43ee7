"""Mesh specs such as ``8:i`` or ``2x4:x,y``, simulated CPU devices, and the mesh signature.

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
        """The concrete mesh over the first ``size`` devices of the default backend."""
        import jax
        from jax.sharding import AxisType

        have = len(jax.devices())
        if have < self.size:
            raise MeshSpecError(
                f"mesh {self} needs {self.size} devices but JAX sees {have}; "
                "call autograder.mesh.use_cpu_devices(N) before JAX starts"
            )
        axis_type = getattr(AxisType, AXIS_TYPE)
        return jax.make_mesh(
            self.shape,
            self.names,
            axis_types=(axis_type,) * len(self.names),
            devices=jax.devices()[: self.size],
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
