"""Why a part lost its points, as a kind a class report can count: read from the message the
verdict wrote, after the case it names ("mesh 8:i, ... per device: ").

The kinds follow the verdicts' own wording; ``tests/grading/test_reasons.py`` holds every failing
message of the grading snapshot to a kind, so a reworded verdict that no rule knows fails there
rather than turning into "other" in a report.
"""

from __future__ import annotations

import re

from ...core.tasks import HLO_TO_JAX

GATED = "not checked until"  # a part judged only after another: its loss is that part's reason
_HLO_NAME = re.compile("|".join(map(re.escape, sorted(HLO_TO_JAX, key=len, reverse=True))))
_CASE = re.compile(r"^mesh .*? per device(?:, [^:]*)?: ")  # the case a message begins with

# (kind, what its message says), first match wins; a kind ending in ":" takes the collectives named.
RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("timeout", ("took longer than", "did not finish", "hung for")),
    (
        "crash",
        (
            "crashed the grader's worker",
            "exited with code",
            "exited with status",
            "killed by signal",
            "ran out of memory",
            "exited before writing",
        ),
    ),
    ("not attempted", ("raised NotImplementedError",)),
    (
        "forbidden collective:",
        (
            "the compiled HLO contains",
            "the program asks for",
            "the program uses",
            "other collectives than",
            "may use none",
        ),
    ),
    ("collective on the wrong axis:", ("the compiled HLO runs", "over axes that")),
    ("not overlapped", ("computes nothing while", "waits for", "wait for more transfers")),
    ("not a ring", ("not its neighbours",)),
    ("unbounded loop", ("trip count XLA cannot determine", "cannot be bounded")),
    ("computes too much", ("the reference's FLOPs", "FLOPs of matmuls per device")),
    ("sends too much", ("sends ",)),
    ("memory at peak", ("at its peak",)),
    ("memory held", ("of the returned state", "is held", "results after the call", "results per device after")),
    ("shared dropout masks", ("the same dropout mask",)),
    ("copies drift apart", ("differ from process",)),
    (
        "wrong dtype, shape or sharding",
        ("output dtype is", "output shape is", "output sharding is", " is sharded P", "(the global batch)"),
    ),
    ("refused program", ("artifact refused",)),
    ("missing function", ("no function named",)),
    ("raised an error", (" raised ", "failed to run")),
    ("invalid results", ("invalid results",)),
    (
        "wrong values",
        ("wrong values", "differs from the reference", "differ from the reference", "returned ", "expected "),
    ),
)


def kind_of(message: str) -> str | None:
    """The kind of a lost part's reason; None where the part was only waiting on another."""
    said = _CASE.sub("", message, count=1)
    if said.startswith(GATED) or message.startswith(GATED):
        return None
    said = said.removeprefix("a hidden case: ")
    for kind, phrases in RULES:
        if any(phrase in said for phrase in phrases):
            if kind.endswith(":"):
                names = {HLO_TO_JAX[op] for op in _HLO_NAME.findall(said.split(";")[0])}  # as students write them
                return f"{kind} {', '.join(sorted(names)) or 'unnamed'}"
            return kind
    if "a hidden case:" in message:  # a hidden case's problem, named by what it is, never by its case
        return "hidden case"
    return "other"


def anonymised(message: str, student: str) -> str:
    """A message fit to show to the class's instructor as an example: the student's name removed
    (a notebook's own error may print it)."""
    return message.replace(student, "<student>")
