"""Public: ``use_devices(8)`` gives a notebook the course's 8 devices (an accelerator's where it
has 8, else simulated CPU devices beside it) and prints which, and why; run it before JAX starts.
``course_devices()`` lists them; ``use_cpu_devices(8)`` asks for simulated CPU devices only."""

from __future__ import annotations

from typing import Any

from .core.mesh import MeshSpec, MeshSpecError, course_devices, use_cpu_devices
from .core.mesh import use_devices as _use_devices

__all__ = ["MeshSpec", "MeshSpecError", "course_devices", "use_cpu_devices", "use_devices"]


def use_devices(count: int = 8) -> tuple[Any, ...]:
    """The course's ``count`` devices, chosen for this host (``JAXCOURSE_DEVICES=cpu`` or
    ``accelerator`` forces a kind); one printed line says which and why."""
    choice = _use_devices(count)
    print(choice.line)
    return choice.devices
