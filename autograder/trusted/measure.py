"""Run one call on real inputs and measure it: per-device values, output sharding, collectives.

Shared by the trusted evaluator (exported artifacts), the reference run and the notebooks'
self-checks, so all three judge a case the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import pspec
from ..core.dataflow import matmul_waits
from ..core.errors import JaxcourseError
from ..core.flops import program_flops
from ..core.hlo import hlo_census, program_bytes, program_bytes_by_axes, stablehlo_collectives, stablehlo_itemsizes
from ..core.quick_compile import compiler_options
from ..core.records import ArrayMeasurement, ProgramStructure, Verdict, fail, ok
from ..core.roofline import peak_bytes
from ..core.timeline import timeline
from ..core.tolerance import Tolerance
from . import value_detail

# The most memory one device may need at its program's peak for the grader to run it. The graded
# cases are small (their references need kilobytes to megabytes), so only a program that makes
# its own large arrays comes near: run, it could take the grading machine's memory from everyone.
MAX_RUN_PEAK = 1 << 30


class TooBigToRun(JaxcourseError, ValueError):
    """A program whose compiled peak is over ``MAX_RUN_PEAK``: refused before it runs."""


def execute(call: Callable[..., Any], args: list[Any], mesh: Any, drawn: bool = False) -> tuple[Any, ProgramStructure]:
    """Compile ``call`` for ``args``, run it once (unless it needs more than ``MAX_RUN_PEAK`` per
    device), and read what its program does; ``drawn``: its timeline too, for a case a student
    sees drawn (a visible case's). The task's mesh is made the context mesh, whatever mesh the
    caller's notebook has set globally."""
    import jax

    jitted = call if hasattr(call, "lower") else jax.jit(call)
    with jax.set_mesh(mesh):
        lowered = jitted.lower(*args)
        compiled = lowered.compile(compiler_options(mesh))
        peak = peak_bytes(compiled)
        if peak is not None and peak > MAX_RUN_PEAK:
            raise TooBigToRun(
                f"needs {peak / 2**30:.1f} GiB per device at its peak, on a case whose inputs are "
                f"{sum(a.nbytes for a in args) / 2**20:.1f} MiB in all: the grader runs no program over "
                f"{MAX_RUN_PEAK >> 30} GiB per device; look for an array the function makes that is not its inputs' size"
            )
        out = compiled(*args)
    asked, hlo = lowered.as_text(), compiled.as_text()
    census = hlo_census(hlo, tuple(mesh.devices.shape), tuple(mesh.axis_names))
    itemsizes = stablehlo_itemsizes(asked)
    structure: ProgramStructure = {
        "asked": dict(stablehlo_collectives(asked)),
        "census": {
            **census.to_json(),
            "program_bytes": program_bytes(census, itemsizes),
            "timeline": timeline(hlo) if drawn else None,
        },
        "out_spec": pspec.of_array(out),
        "matmul_waits": matmul_waits(asked),
        "signature": {
            "flops": program_flops(hlo),
            "peak": peak_bytes(compiled),
            "traffic": program_bytes_by_axes(census, itemsizes),
            "resident": sum(held_per_device(leaf) for leaf in jax.tree.leaves(out)),
        },
    }
    return out, structure


def held_per_device(out: Any) -> int:
    """Bytes of the largest piece of ``out`` that any one device holds."""
    return max(int(shard.data.nbytes) for shard in out.addressable_shards)


def measured(values: Verdict, structure: ProgramStructure, reference: ProgramStructure) -> ArrayMeasurement:
    """A case's verdict on its values, with what its program does beside what the reference's
    does on the same case."""
    return {
        "values": values,
        "asked": structure["asked"],
        "census": structure["census"],
        "out_spec": structure["out_spec"],
        "matmul_waits": structure["matmul_waits"],
        "signature": structure["signature"],
        "reference_census": reference["census"],
        "reference_signature": reference["signature"],
    }


def host_value(out: Any) -> tuple[np.ndarray, str]:
    """A numpy copy and the dtype name; keys become their raw uint32 data."""
    import jax

    if dtype_name(out) == "key":
        return np.asarray(jax.random.key_data(out)), "key"
    return np.asarray(out), str(out.dtype)


def dtype_name(out: Any) -> str:
    """The dtype's name, "key" for a PRNG key, without copying the array."""
    import jax

    if jax.dtypes.issubdtype(out.dtype, jax.dtypes.prng_key):  # type: ignore[attr-defined]  # jax.dtypes re-exports issubdtype implicitly
        return "key"
    return str(out.dtype)


def compare_values(
    out: Any,
    expected: np.ndarray,
    expected_dtype: str,
    tolerance: Tolerance | tuple[float, float],
    mesh: Any,
    sample: bool = False,
) -> Verdict:
    """Check every device's piece of ``out`` against the same piece of ``expected``; wrong values
    come with a ``detail``: where the first wrong device's piece first differs and the error's
    pattern over the whole array, and with ``sample`` a few expected values beside the returned
    ones there. Only a student's own check asks for that sample: its inputs are hers, and its
    expected values ship with the course; a grading's (salted) and hidden cases' stay secret."""
    if not hasattr(out, "addressable_shards"):  # a tuple or a list of arrays where one was asked for
        return fail(f"returned a {type(out).__name__} where one array was expected")
    dtype = dtype_name(out)
    if dtype != expected_dtype:
        return fail(f"output dtype is {dtype}, expected {expected_dtype}")
    # Read before the copy, which an empty array's shards can fail; a key's is its raw data's.
    shape = host_value(out)[0].shape if dtype == "key" else tuple(out.shape)
    if shape != expected.shape:
        return fail(
            f"output shape is {_per_device(out)} per device, expected {_expected_per_device(out, expected)} "
            f"under the output sharding {_show_spec(out)}"
        )
    got, _ = host_value(out)
    tolerance = Tolerance(*tolerance)
    rtol, atol = tolerance.rtol, tolerance.atol_for(expected)
    bad_devices = []
    worst = 0.0
    errors = value_detail.Errors(expected.shape)
    for shard in sorted(out.addressable_shards, key=lambda s: s.device.id):
        piece, want = np.asarray(got[shard.index], np.float64), np.asarray(expected[shard.index], np.float64)
        close = np.isclose(piece, want, rtol=rtol, atol=atol, equal_nan=True)
        if not close.all():
            worst = max(worst, float(np.nanmax(np.abs(piece - want))))
            bad_devices.append((shard.device, int((~close).sum()), close.size))
            errors.add(shard, piece, want, close)
    if not bad_devices:
        return ok()
    _, wrong, total = bad_devices[0]
    where = ", ".join(f"{d} ({_coords(mesh, d)})" for d, _, _ in bad_devices[:4])
    more = f" and {len(bad_devices) - 4} more" if len(bad_devices) > 4 else ""
    verdict = fail(
        f"wrong values on {len(bad_devices)} of {len(out.addressable_shards)} devices: "
        f"{where}{more}; on the first, {wrong} of {total} values differ, max error {worst:.3g} "
        f"(tolerance {tolerance.show(expected)})"
    )
    block = tuple(out.sharding.shard_shape(out.shape)) + tuple(expected.shape[out.ndim :])
    verdict["detail"] = errors.detail(np.asarray(got, np.float64), np.asarray(expected, np.float64), block, sample)
    return verdict


def _per_device(out: Any) -> tuple[int, ...]:
    return tuple(out.sharding.shard_shape(out.shape))


def _expected_per_device(out: Any, expected: np.ndarray) -> tuple[int, ...]:
    try:
        return tuple(out.sharding.shard_shape(expected.shape))
    except ValueError:
        return expected.shape


def _show_spec(out: Any) -> str:
    return pspec.show(pspec.of_array(out) or [])


def _coords(mesh: Any, device: Any) -> str:
    where = np.argwhere(mesh.devices == device)
    if not len(where):
        return "not in the mesh"
    return ", ".join(f"{name}={int(i)}" for name, i in zip(mesh.axis_names, where[0]))


def compare_python(got: dict[str, Any], expected: dict[str, Any]) -> Verdict:
    """Plain-Python results: equal values, or the same exception type."""
    if "raises" in expected:
        if got.get("raises") == expected["raises"]:
            return ok()
        shown = f"raised {got['raises']}" if "raises" in got else f"returned {got.get('value')!r}"
        return fail(f"expected {expected['raises']}, but the function {shown}")
    if "raises" in got:
        return fail(f"raised {got['raises']}: {got.get('message', '')}; expected {_show(expected['value'])}")
    if not _same(got.get("value"), expected["value"]):
        return fail(f"returned {_show(got.get('value'))}, expected {_show(expected['value'])}")
    return ok()


def _same(got: Any, expected: Any) -> bool:
    """Equal, except that numbers need only agree to rounding: 2/3 of 24 is 16 whichever way a
    student writes it."""
    if isinstance(got, np.generic | np.ndarray):  # a NumPy result in a check run in the kernel, as JSON has it
        got = got.tolist()
    number = (int, float)
    if isinstance(got, number) and isinstance(expected, number) and not isinstance(got, bool):
        return math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(got, list) and isinstance(expected, list):
        return len(got) == len(expected) and all(map(_same, got, expected))
    equal: bool = got == expected
    return equal


def _show(value: Any) -> str:
    return repr(tuple(value)) if isinstance(value, list) else repr(value)
