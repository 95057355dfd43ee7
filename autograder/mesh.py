"""Public: ``use_devices(8)`` gives a notebook the course's 8 devices (an accelerator's where it
has 8, else simulated CPU devices) and prints which, and why; run it before JAX starts.
``use_cpu_devices(8)`` asks for simulated CPU devices beside whatever else JAX finds."""

from __future__ import annotations

from .core.mesh import MeshSpec, MeshSpecError, use_cpu_devices
from .core.mesh import use_devices as _use_devices

__all__ = ["MeshSpec", "MeshSpecError", "use_cpu_devices", "use_devices"]


def use_devices(count: int = 8) -> None:
    """Start JAX on the course's ``count`` devices, chosen for this host (``JAXCOURSE_DEVICES=cpu``
    or ``accelerator`` forces a kind); one printed line says which and why."""
    print(_use_devices(count).line)
