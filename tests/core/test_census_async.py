"""The census of programs as XLA's GPU (and TPU) compilers print them: collectives split into
asynchronous pairs (``all-gather-start`` / ``-done``...) or wrapped in ``async-start`` /
``async-done`` around a called computation. Each runs once and sends what it delivers, so the
census of a program must not change when its collectives are written asynchronously.

Two kinds of evidence. Modules from XLA's own tests (``fixtures/*.hlo``, each naming its source),
against the values and bytes worked out by hand and against the census of the same module written
synchronously. And programs of the course compiled here on 8 CPU devices, their collectives
rewritten into XLA:GPU's asynchronous forms (``_to_async``), against the census of the program
as XLA:CPU compiled it.
"""

from __future__ import annotations

import re
from typing import Any

import jax
import jax.numpy as jnp
import pytest

from autograder.core.hlo import Census, hlo_census

from ..helpers.hlo_fixtures import hlo_fixture

MESH_SHAPE, AXES = (2, 4), ("data", "model")


def _assert_same(got: Census, want: Census) -> None:
    """Every figure of two censuses alike (values and bytes to rounding: they are sums of fractions)."""
    assert got.counts == want.counts
    assert got.unbounded == want.unbounded
    assert got.by_axes == want.by_axes
    assert got.farthest_hops == want.farthest_hops
    for field in ("values_per_device", "bytes_per_device", "link_values_per_device"):
        assert getattr(got, field) == pytest.approx(getattr(want, field)), field
    for field in ("values_by_op", "wire_by_op"):
        assert dict(getattr(got, field)) == pytest.approx(dict(getattr(want, field))), field
    for field in ("values_by_axes", "wire_by_axes"):
        mine, theirs = getattr(got, field), getattr(want, field)
        assert mine.keys() == theirs.keys(), field
        for axes in mine:
            assert dict(mine[axes]) == pytest.approx(dict(theirs[axes])), (field, axes)


# --- modules from XLA's tests -----------------------------------------------------------------

# fixture, num_partitions to add (None: the module's own), the collective, values and bytes one
# device sends under ring algorithms, and the lines that write the same program synchronously.
XLA_CASES: list[tuple[str, int | None, str, float, float, dict[str, str]]] = [
    # a permute sends its whole result: XLA's own cost model says 4096 * 4 bytes
    (
        "gpu_collective_permute_start.hlo",
        None,
        "collective-permute",
        4096,
        4096 * 4,
        {
            "  cps = (f32[4096], f32[4096]) collective-permute-start(p0), source_target_pairs={{0,1},{1,0}}\n"
            "  ROOT r = f32[4096] collective-permute-done(cps)": "  ROOT r = f32[4096] collective-permute(p0), source_target_pairs={{0,1},{1,0}}"
        },
    ),
    # a combined all-gather of 4: each device sends 3/4 of both results ((4096 + 2048) values)
    (
        "gpu_all_gather_start_combined.hlo",
        None,
        "all-gather",
        0.75 * 6144,
        0.75 * 6144 * 4,
        {
            "  ag-start = ((f32[1024],f32[512]), (f32[4096],f32[2048])) all-gather-start(": "  ROOT _ = (f32[4096],f32[2048]) all-gather(",
            "  ROOT _ = (f32[4096],f32[2048]) all-gather-done(ag-start)": "",
        },
    ),
    # a combined reduce-scatter of 4 wrapped in async-start: 3 x each device's (1024 + 512) results
    (
        "gpu_async_reduce_scatter.hlo",
        None,
        "reduce-scatter",
        3 * 1536,
        3 * 1536 * 4,
        {
            "  rs-start = ((f32[4096],f32[2048]),(f32[1024],f32[512])) async-start(p.0,p.1), calls=async_computation\n"
            "  ROOT _ = (f32[1024],f32[512]) async-done(rs-start)": "  ROOT _ = (f32[1024],f32[512]) reduce-scatter(p.0,p.1), dimensions={0}, to_apply=add, "
            "use_global_device_ids=true, replica_groups={{0,1,2,3}}, channel_id=1"
        },
    ),
    # the same, printed with XLA's syntax sugar: ((operand), result) reduce-scatter-start, 2 devices
    (
        "gpu_reduce_scatter_start.hlo",
        None,
        "reduce-scatter",
        1 * 2,
        1 * 2 * 4,
        {
            "%start = ((s32[4]{0}), s32[2]{0}) reduce-scatter-start(": "ROOT %done = s32[2]{0} reduce-scatter(",
            "  ROOT %done = s32[2]{0} reduce-scatter-done(%start)": "",
        },
    ),
    # one all-reduce-start of two arrays sends both: 2 (n - 1) / n of 2 + 2 values on 8 devices
    (
        "all_reduce_start_two_operands.hlo",
        8,
        "all-reduce",
        2 * 7 / 8 * 4,
        2 * 7 / 8 * 4 * 4,
        {
            "  start = (f32[2], f32[2]) all-reduce-start(p0, p1), to_apply=add\n"
            "  ROOT done = (f32[2], f32[2]) all-reduce-done(start)": "  ROOT done = (f32[2], f32[2]) all-reduce(p0, p1), to_apply=add"
        },
    ),
    # a combined permute: ((operands), (results)), both results sent
    (
        "collective_permute_start_combined.hlo",
        None,
        "collective-permute",
        4,
        16,
        {
            "  start = ((f32[2], f32[2]), (f32[2], f32[2])) collective-permute-start(p0, p1), source_target_pairs={{0,1},{1,0}}\n"
            "  ROOT done = (f32[2], f32[2]) collective-permute-done(start)": "  ROOT done = (f32[2], f32[2]) collective-permute(p0, p1), source_target_pairs={{0,1},{1,0}}"
        },
    ),
    # a combined all-gather of a float32 and a bfloat16 array on 8 devices: 7/8 of each result
    (
        "all_gather_start_tuple.hlo",
        8,
        "all-gather",
        7 / 8 * 8,
        7 / 8 * (4 * 4 + 4 * 2),
        {
            "  start = ((f32[2], bf16[2]), (f32[4], bf16[4])) all-gather-start(p0, p1), dimensions={0}\n"
            "  ROOT done = (f32[4], bf16[4]) all-gather-done(start)": "  ROOT done = (f32[4], bf16[4]) all-gather(p0, p1), dimensions={0}"
        },
    ),
    # TPU's tiled layouts: a gather of 2 sends half of f32[16,256,256]
    (
        "tpu_all_gather_start.hlo",
        None,
        "all-gather",
        0.5 * 16 * 256 * 256,
        0.5 * 16 * 256 * 256 * 4,
        {
            "  %ag-start = (f32[8,256,256], f32[16,256,256]) all-gather-start(": "  %ag-done = f32[16,256,256] all-gather(",
            "  %ag-done = f32[16,256,256] all-gather-done((f32[8,256,256], f32[16,256,256]) %ag-start), "
            'metadata={op_type="AllGather" op_name="ag0"}\n': "",
        },
    ),
]


def _synchronous(text: str, lines: dict[str, str]) -> str:
    for old, new in lines.items():
        assert old in text, f"the fixture no longer holds {old!r}"
        text = text.replace(old, new)
    assert not re.search(r"-start\(|-done\(", text), text
    return text


@pytest.mark.parametrize("case", XLA_CASES, ids=[case[0] for case in XLA_CASES])
def test_xla_async_modules_count_once_with_the_bytes_they_deliver(case):
    name, partitions, op, values, nbytes, sync_lines = case
    text = hlo_fixture(name, partitions)
    census = hlo_census(text)
    assert census.counts == {op: 1}, f"{name}: each asynchronous pair is one {op}"
    assert census.values_per_device == pytest.approx(values), name
    assert census.bytes_per_device == pytest.approx(nbytes), name
    _assert_same(census, hlo_census(_synchronous(text, sync_lines)))


def test_an_async_computation_named_by_its_update_and_done_runs_once():
    """Older XLA printed ``calls=`` on async-update and async-done as well as async-start; the
    wrapped reduce-scatter still runs once."""
    text = hlo_fixture("gpu_async_reduce_scatter.hlo")
    start = "  rs-start = ((f32[4096],f32[2048]),(f32[1024],f32[512])) async-start(p.0,p.1), calls=async_computation\n"
    spelled = text.replace(
        start + "  ROOT _ = (f32[1024],f32[512]) async-done(rs-start)",
        start + "  rs-update = ((f32[4096],f32[2048]),(f32[1024],f32[512])) async-update(rs-start), "
        "calls=async_computation\n  ROOT _ = (f32[1024],f32[512]) async-done(rs-update), calls=async_computation",
    )
    assert spelled != text
    _assert_same(hlo_census(spelled), hlo_census(text))
    assert hlo_census(spelled).counts == {"reduce-scatter": 1}


def test_the_older_all_reduce_start_form_counts_its_result_once():
    """``(operand, result, u32[], u32[]) all-reduce-start`` (as in XLA's
    collectives_schedule_linearizer_test.cc) sends one array, not its operand as well."""
    module = """HloModule async_collectives, num_partitions=8

sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT add = f32[] add(x, y)
}

ENTRY main {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  ar_start = (f32[4], f32[4], u32[], u32[]) all-reduce-start(p0), replica_groups={}, to_apply=sum
  ar_done = f32[4] all-reduce-done(ar_start)
  ar1 = f32[4] all-reduce(p1), replica_groups={}, to_apply=sum
  ROOT tuple = (f32[4], f32[4]) tuple(ar_done, ar1)
}
"""
    census = hlo_census(module)
    assert census.counts == {"all-reduce": 2}
    assert census.values_per_device == pytest.approx(2 * (2 * 7 / 8 * 4))


# --- the course's programs, compiled on CPU and rewritten as XLA:GPU prints them ---------------

_SYNC_RE = re.compile(
    r"^(?P<indent>\s*)(?P<root>ROOT )?%(?P<name>[\w.\-]+) = (?P<type>.+?) "
    r"(?P<op>all-reduce|all-gather|collective-permute|reduce-scatter|all-to-all)\((?P<rest>.*)$"
)
_DEF_RE = re.compile(r"^\s*(?:ROOT )?%([\w.\-]+) = (\(.*?\)|\S+) ")


def _to_async(hlo: str, wrapped: str) -> str:
    """``hlo`` (a module XLA:CPU compiled) with each collective rewritten into the asynchronous
    form XLA:GPU prints: ``%x = T op(operands), attrs`` becomes a ``%x.start`` and a ``%x`` done.

    - all-reduce: ``T all-reduce-start(...)``, then ``T all-reduce-done(%x.start)``;
    - all-gather: ``(operand, T)`` (``((operands...), T)`` for several) ``all-gather-start``;
    - collective-permute: ``(operand, T, u32[], u32[]) collective-permute-start``;
    - reduce-scatter and all-to-all, which XLA:GPU wraps in an async computation: with
      ``wrapped="sugar"`` as it prints them, ``((operands...), T) reduce-scatter-start(...)`` and
      ``T reduce-scatter-done(%x.start)``; with ``wrapped="calls"``, a computation ``%x.wrapped``
      holding the collective, ``((operands...), T, s32[]) async-start(...), calls=%x.wrapped`` and
      ``T async-done(%x.start), calls=%x.wrapped`` (the done naming the computation, as older
      XLA printed it).
    """
    types = {m.group(1): m.group(2) for line in hlo.splitlines() if (m := _DEF_RE.match(line))}
    lines, computations = [], []
    for line in hlo.splitlines():
        match = _SYNC_RE.match(line)
        if not match:
            lines.append(line)
            continue
        indent, root, name, result, op, rest = match.group("indent", "root", "name", "type", "op", "rest")
        root = root or ""
        operands, attrs = rest[: _close(rest)], rest[_close(rest) + 1 :]
        ins = [types[o.strip().lstrip("%")] for o in operands.split(",")]
        ins_tuple = "(" + ", ".join(ins) + ")"
        start, done = f"%{name}.start", f"%{name}"
        if op == "all-reduce":
            lines.append(f"{indent}{start} = {result} all-reduce-start({operands}){attrs}")
            lines.append(f"{indent}{root}{done} = {result} all-reduce-done({start})")
        elif op in ("all-gather", "collective-permute"):
            first = ins[0] if len(ins) == 1 else ins_tuple
            extra = ", u32[], u32[]" if op == "collective-permute" else ""
            lines.append(f"{indent}{start} = ({first}, {result}{extra}) {op}-start({operands}){attrs}")
            lines.append(f"{indent}{root}{done} = {result} {op}-done({start})")
        elif wrapped == "sugar":
            lines.append(f"{indent}{start} = ({ins_tuple}, {result}) {op}-start({operands}){attrs}")
            lines.append(f"{indent}{root}{done} = {result} {op}-done({start})")
        else:
            params = [f"%{name}.p{i}" for i in range(len(ins))]
            signature = ", ".join(f"{name}.p{i}: {t}" for i, t in enumerate(ins))
            body = [f"  {p} = {t} parameter({i})" for i, (p, t) in enumerate(zip(params, ins))]
            body.append(f"  ROOT %{name}.inner = {result} {op}({', '.join(params)}){attrs}")
            computations.append("\n".join([f"%{name}.wrapped ({signature}) -> {result} {{", *body, "}"]))
            lines.append(
                f"{indent}{start} = ({ins_tuple}, {result}, s32[]) async-start({operands}), calls=%{name}.wrapped"
            )
            lines.append(f"{indent}{root}{done} = {result} async-done({start}), calls=%{name}.wrapped")
    return "\n".join(lines + [""] + computations) + "\n"


def _close(text: str) -> int:
    """The index of the ``)`` that closes an operand list ``text`` starts inside."""
    depth = 0
    for index, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return index
    raise ValueError(text)


def _programs() -> dict[str, Any]:
    mesh = jax.make_mesh(MESH_SHAPE, AXES, axis_types=(jax.sharding.AxisType.Auto,) * 2)

    def on_mesh(f):
        return jax.jit(jax.shard_map(f, mesh=mesh, in_specs=jax.P("model"), out_specs=jax.P("model")))

    right = [(i, (i + 1) % 4) for i in range(4)]
    return {
        # a ring of 3 steps in a while loop
        "ring": on_mesh(lambda a: jax.lax.fori_loop(0, 3, lambda _, y: jax.lax.ppermute(y, "model", right), a)),
        # XLA:CPU merges the psum of two arrays into one all-reduce of a tuple
        "psum_of_two": on_mesh(lambda a: sum(jax.lax.psum((a.sum(1), (a * a).sum(1)), "data"))),
        "all_gather": on_mesh(lambda a: jax.lax.all_gather(a, "model", tiled=True)),
        "psum_scatter": on_mesh(lambda a: jax.lax.psum_scatter(a, "model", tiled=True)),
        # XLA:CPU splits it into an all-to-all of four arrays
        "all_to_all": on_mesh(lambda a: jax.lax.all_to_all(a, "model", 0, 1, tiled=True)),
    }


@pytest.fixture(scope="module")
def compiled() -> dict[str, str]:
    x = jnp.arange(32 * 16, dtype=jnp.float32).reshape(32, 16)
    return {name: program.lower(x).compile().as_text() for name, program in _programs().items()}


@pytest.mark.parametrize("wrapped", ["sugar", "calls"])
@pytest.mark.parametrize("program", ["ring", "psum_of_two", "all_gather", "psum_scatter", "all_to_all"])
def test_course_programs_census_alike_in_xla_gpu_async_forms(compiled, program, wrapped):
    cpu = compiled[program]
    gpu = _to_async(cpu, wrapped)
    left = [line for line in gpu.splitlines() if _SYNC_RE.match(line) and ".inner = " not in line]
    assert not left, f"the rewrite left synchronous collectives: {left}"
    assert re.search(r"-start\(", gpu), "the rewrite found no collective"
    want = hlo_census(cpu, MESH_SHAPE, AXES)
    assert sum(want.counts.values()) >= 1 and want.values_per_device
    _assert_same(hlo_census(gpu, MESH_SHAPE, AXES), want)
