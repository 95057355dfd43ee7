"""A function's program at its realistic size beside the reference's, projected on each machine
(``records.ScaledProgram``, ``core/roofline.py``), as a student reads it under her feedback and
``jaxcourse check``'s table: her time, the reference's, their ratio, and where her time goes.
A model, and each view says so."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping

from ...core.calibration import HOPPER_ERROR, LARGE_S, MEASURED_ON
from ...core.machines import MACHINES
from ...core.records import CostRecord, ScaledProgram
from ...core.roofline import Cost, Projection, project
from ...core.units import duration

MODEL = (
    "projected at a realistic size, compiled and never run: a model (peak rates at the share of them a "
    "measured chip reached, a call's fixed cost, each collective's algorithm on the machine's network, "
    f"less what runs under other work); on one H200 it was within {HOPPER_ERROR:.2f}x of measured times "
    f"for programs of {LARGE_S * 1e3:g} ms or more ({MEASURED_ON}); the TPU's times are at its peaks, never measured"
)
HEADER = ("machine", "yours", "reference", "ratio", "where yours goes")


def breakdown(p: Projection) -> str:
    """Where a projected time goes: ``call + max(compute, memory) + links - hidden``, each time
    with its unit."""
    links = " + ".join(f"{axes or 'none'} {duration(s)}" for axes, s in p.links_s.items()) or "0 s"
    call = f"call {duration(p.per_call_s)} + " if p.per_call_s else ""
    return (
        f"{call}max(compute {duration(p.compute_s)}, memory {duration(p.memory_s)}) + links {links} "
        f"- hidden {duration(p.hidden_s)}" + ("" if p.fits else "; does not fit one chip's memory")
    )


def projections(scaled: ScaledProgram, machine: str) -> tuple[Projection, Projection]:
    """The student's program and the reference's on ``machine``."""
    return _projected(scaled["cost"], scaled["mesh"], machine), _projected(scaled["reference"], scaled["mesh"], machine)


# The projections made lately, by what they project: a class of 200 on every machine, a few MB.
_PROJECTED: dict[tuple[str, str, str], Projection] = {}
_KEPT = 4096


def _projected(cost: CostRecord, mesh: dict[str, int], machine: str) -> Projection:
    """``cost`` on ``machine``, projected once however many views show it: a class run's pages
    (two formats, each page written twice) and its leaderboard projected 137 times a student of
    01_collectives where 16 differ, the reference's the same for every student."""
    key = (json.dumps(cost), json.dumps(mesh), machine)  # in their order: a mesh's is its devices'
    projection = _PROJECTED.get(key)
    if projection is None:
        if len(_PROJECTED) >= _KEPT:
            _PROJECTED.clear()
        projection = _PROJECTED[key] = project(Cost.of(cost), mesh, MACHINES[machine])
    return projection


def cells(scaled: ScaledProgram, machine: str) -> tuple[str, str, str, str, str]:
    yours, reference = projections(scaled, machine)
    ratio = f"{yours.total_s / reference.total_s:.2f}x" if reference.total_s else ""
    return machine, duration(yours.total_s), duration(reference.total_s), ratio, breakdown(yours)


def text(at_scale: Mapping[str, ScaledProgram]) -> str:
    """Every function's projections as aligned text, or "" when none was compiled at scale."""
    blocks = []
    for name, scaled in at_scale.items():
        rows = [HEADER, *(cells(scaled, machine) for machine in MACHINES)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
        lines = [f"{name} at {scaled['case']} ({scaled['why']}):"]
        lines += [
            "  "
            + "  ".join(c.rjust(w) if 0 < i < 4 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
            for row in rows
        ]
        blocks.append("\n".join(lines))
    return f"{MODEL}.\n\n" + "\n\n".join(blocks) if blocks else ""


def to_html(at_scale: Mapping[str, ScaledProgram]) -> str:
    """Every function's projections as tables, escaped, or "" when none was compiled at scale."""
    if not at_scale:
        return ""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADER)
    tables = []
    for name, scaled in at_scale.items():
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells(scaled, machine)) + "</tr>"
            for machine in MACHINES
        )
        caption = html.escape(f"{name} at {scaled['case']} ({scaled['why']})")
        tables.append(f"<table class='scale'><caption>{caption}</caption><tr>{head}</tr>{body}</table>")
    return f"<h2>At scale</h2><p>{html.escape(MODEL)}.</p>" + "".join(tables)
