"""Public: ``use_cpu_devices(8)`` gives JAX simulated CPU devices; run it before JAX starts."""

from .core.mesh import MeshSpec, MeshSpecError, use_cpu_devices

__all__ = ["MeshSpec", "MeshSpecError", "use_cpu_devices"]
