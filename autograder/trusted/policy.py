"""The artifact policy, in one place: what an exported program from the sandbox must be before
the trusted side runs it. A pure array program, within a size cap, for the task's devices and
platform, with its safety checks on, and no custom calls but those sharding lowers to (a host
callback would run Python on the grader's side)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.errors import JaxcourseError
from ..core.hlo import custom_call_targets
from ..core.records import Measurement, fail

ALLOWED_CUSTOM_CALLS = frozenset(
    {
        "Sharding",
        "SPMDFullToShardShape",
        "SPMDShardToFullShape",
        "xla.sdy.GlobalToLocalShape",
        "xla.sdy.LocalToGlobalShape",
        "xla.sdy.FuncResultSharding",
    }
)
MAX_ARTIFACT_BYTES = 8 << 20


class Refused(JaxcourseError):
    """An artifact the trusted side will not run; the message says why."""


def load(path: str | Path) -> Any:
    """The deserialized ``jax.export.Exported``, or ``Refused``: too big, or not an artifact."""
    import jax

    data = Path(path).read_bytes()
    if len(data) > MAX_ARTIFACT_BYTES:
        raise Refused(f"artifact is {len(data)} bytes; the limit is {MAX_ARTIFACT_BYTES}")
    try:
        return jax.export.deserialize(bytearray(data))
    except Exception as err:  # anything malformed is the sandbox's fault, never the grader's
        raise Refused(f"artifact could not be read: {type(err).__name__}") from None


_TEXTS: dict[bytes, str] = {}  # the last few artifacts' modules as text, by their bytes


def module_text(exported: Any) -> str:
    """The artifact's module as text, parsed once however many checks read it: each parse makes
    an MLIR context and reads the module again, a tenth of a small case's measuring."""
    key = exported.mlir_module_serialized
    if key not in _TEXTS:
        if len(_TEXTS) >= 8:
            _TEXTS.clear()
        _TEXTS[key] = exported.mlir_module()
    return _TEXTS[key]


def program_problems(exported: Any, mesh: Any) -> list[str]:
    """Reasons to refuse any artifact, whatever its kind: wrong platform or device count, safety
    checks disabled, or code that is not a pure array program."""
    problems = []
    platform = mesh.devices.flat[0].platform
    if tuple(exported.platforms) != (platform,):
        problems.append(f"exported for {exported.platforms}, graded on {platform}")
    if exported.nr_devices != mesh.size:
        problems.append(f"exported for {exported.nr_devices} devices, the mesh has {mesh.size}")
    if exported.disabled_safety_checks:
        problems.append("exported with safety checks disabled")
    calls = custom_call_targets(module_text(exported)) - ALLOWED_CUSTOM_CALLS
    if calls:
        problems.append(f"holds custom calls or host callbacks: {', '.join(sorted(calls))}")
    return problems


def refused(reason: str) -> Measurement:
    return {"values": fail(f"artifact refused: {reason}")}
