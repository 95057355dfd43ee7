"""The grading snapshot: every wrong submission's, every attack's and the reference's full
report (status, message, and each test's name, score, status and message), recorded before the
package was restructured. A refactoring changes no grade and no word of a report: the tests that
grade these notebooks anyway compare each report with its record here.

``tests/snapshots/grading.json`` holds one record per key, ``"<assignment>/<sandbox>/<student>"``
or ``"adversarial/<case>"``, and two lists beside them:

``_normalise``  [pattern, replacement] pairs applied to every message, recorded and graded alike,
                for what changes from run to run (sizes, which process failed first, ...).
                The fourth was added with the restructuring: a hang report names the frame the
                grader's own training loop waits in, ``(training.py:139 in <listcomp>)``, and that
                loop moved to ``harness/layouts.py``. The file and line are where the grader's
                code sits, not what the student's code did, so both are read as ``(<frame> in ``.
                One more came with issue 14: 03's data run out in every odd-numbered process, and
                which of them asks past its end first varies, so ``process 3's data holds 4
                batches, and step 4 asks for batch 5`` reads as ``process <rank>'s data holds <n>
                batches, and step <n> asks for batch <n + 1>`` (issue 23 draws each run's counts,
                and which process's count is shown is the same race). With issue 23 also: where
                a hung process waits, ``(<train>:9 in train)`` or the grader's own ``(<frame> in
                <listcomp>)``, depends on how far asynchronous dispatch let it run before the hang
                was seen, so both read as ``(<where it waits>)``. For the same reason, such a
                process is sometimes listed as "did not arrive" rather than "waiting inside JAX":
                when the hang is seen while its thread is blocked in a compiled step called from
                that line (jaxlib's C++ fast path leaves no Python frame of JAX in its stack dump),
                nothing shows it inside JAX; CI's run of 2026-11-27 met it once. The last rule
                reads that listing as the usual one.

One record changed on purpose since: ``one_step_fewer``'s "train: 4 processes x 2 devices" now
says it was not trained there because train hung in another layout, with that hang's report (a
group that never ends costs one time limit, not one per layout; issue 13). And every record of
02_sharded_matmul changed with issue 14: parts 2 and 3 became ``matmul_case2`` and
``matmul_case3``, whose students choose the cheaper plan (their points moved from collectives to
communication), and ``comm_bytes`` gained the plan ``matmul_gather_both``, one more case. In
03_multiprocess_training the processes' data now differ in length (the odd-numbered hold two
batches fewer), so ``train`` must agree on the number of steps: ``one_step_fewer`` became the
train that loops over its own data and hangs, its report naming the last-batch hazard, and the
runs of ``no_gradient_averaging`` and ``same_dropout_key`` are a step shorter with 2 and 4
processes, which moves the figures in their messages.
04_fsdp_tensor_parallel's records were added with issue 15, when the assignment was written: they
were recorded from its first grading, after each was read against its file's reasons, so that a
later change to the engine (the memory part, the differentiated cases) shows as a diff here.
05_transformer_parallel's records were added the same way with issue 26, when it was written.
06_pipeline_experts's records were added the same way with issue 27, when it was written.
07_inference's records were added the same way with issue 55, when it was written. Two of them
(``fixed_decode_step``'s technique, which allows no collective) changed their words on purpose
since: "may use only no collectives" reads "may use no collectives".
Issue 23 changed many records on purpose, so that no part's points can be had without what it
teaches: a part's communication is judged only once its collectives are right; a ring part's
values weigh half of it, a choosing part's choice half; 04's ``dp_tp_step`` is graded on its
collectives per mesh axis and on the memory each device holds; 03's dropout part only on a
data-parallel step, and each 03 run draws the processes' batch counts (the figures of its
messages moved); a visible part that fails on a hidden case no longer names it, and a part passed
on hidden cases alone says so (``judged on hidden cases only``) instead of listing their traffic.
Issue 39 changed every record of 01, 02, 04, 05 and 06 on purpose, so that a part's structural
points are earned by what its program achieves, measured against the reference's on the same
mesh: the part once called "collectives" is "technique" (its collectives, a ring's neighbours, a
collective matmul's overlap, and FLOPs, peak memory, bytes per mesh axis and what a step holds
within loose bounds of the reference's); communication, memory and peak memory are judged once it
holds, each against the reference's within a tight bound, their messages in ratios with the
figures; no count of operations and no required collective earns or loses points. So: a ring that
skips its neighbours, or sends whole arrays, or holds every block, loses its technique (01's
ring_direct_sends, 02's collective_matmul_direct_sends and gathers_first, 06's
gpipe_skips_neighbours, 05's ring_attention_concatenates_blocks: with it their communication, no
longer judged); a step not sharded at rest loses its technique, and with it memory (04's
fsdp_keeps_full_weights and optimizer_state_replicated); 04's two_all_reduces_forward and 02's
reshard_gathers_a lose theirs to their bytes, not to a count; every passed part's note gives its
ratios to the reference's. 05's ring attention has a longer visible causal case (256), and the
hidden cases of 02, 05 and 06 grew. The library's new files were recorded from their first
grading, after each was read against its docstring. The fork bomb's record, unstable and so never
rewritten, had its part renamed by hand. Issue 40 turned 06's bubble_fraction into the bubble of
an interleaved schedule (a third argument, chunks, and other cases): ``bubble_off_by_one``'s two
messages name the new cases, and four files joined, recorded from their first grading. Issue 53
derived each part's bfloat16 tolerance from the reference's own error against float32: 02's atol
became 0.2, which four messages name (``ring_wrong_direction``'s and ``wrong_chunk_index``'s, in
both sandboxes); edited by hand, every other word of them recomputed and unchanged.
``_unstable``   [key, why] pairs whose status depends on which limit stops them first: only the
                status is compared, and only with the statuses the caller allows.

A change of behaviour on purpose (a new part, new points, a reworded verdict) is recorded with
``make snapshots``: it runs the tests that grade these notebooks, ``RECORDED_BY`` (the reference's
and the library's in ``tests/grading/test_grading.py``, the attacks in
``tests/adversarial/test_adversarial.py``, 03's in ``tests/trusted/test_training.py``), with
``JAXCOURSE_UPDATE_SNAPSHOT=1``: each report then replaces its record (new keys are added), and the
diff of ``grading.json`` is what a reviewer reads, record by record. The docker sandbox's records
need the Docker engine; without it those tests skip and their records stay as they were.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).resolve().parents[1] / "snapshots" / "grading.json"
# The test files that call assert_matches, each report its record: what `make snapshots` runs.
RECORDED_BY = (
    "tests/grading/test_grading.py",
    "tests/adversarial/test_adversarial.py",
    "tests/trusted/test_training.py",
)
RERECORD = (
    "if the change is on purpose (a new part, new points, a reworded verdict), re-record with `make snapshots` "
    "and read the diff of tests/snapshots/grading.json, record by record"
)

Record = dict[str, Any]  # {"status": str, "message": str, "tests": [[name, score, status, message], ...]}


@functools.cache
def _snapshot() -> dict[str, Any]:
    return json.loads(SNAPSHOT.read_text())


def records() -> dict[str, Record]:
    return {k: v for k, v in _snapshot().items() if not k.startswith("_")}


def unstable() -> dict[str, str]:
    return dict(_snapshot()["_unstable"])


def normalise(message: str) -> str:
    # The rules are the snapshot's own "_normalise" list (see the module docstring for each one's
    # reason); the fourth, r"\(\w+\.py:\d+ in " -> "(<frame> in ", hides the grader's own frame in
    # a hang report, which moved from training.py to harness/layouts.py in the restructuring.
    for pattern, replacement in _snapshot()["_normalise"]:
        message = re.sub(pattern, replacement, message)
    return message


def record_of(report) -> Record:
    """A graded ``Report`` as the snapshot records one, normalised."""
    return {
        "status": report.status,
        "message": normalise(report.message),
        "tests": [[t.name, float(t.score), t.status, normalise(t.message)] for t in report.tests],
    }


def _normalised(record: Record) -> Record:
    return {
        "status": record["status"],
        "message": normalise(record["message"]),
        "tests": [[name, float(score), status, normalise(message)] for name, score, status, message in record["tests"]],
    }


def _lines(record: Record) -> list[str]:
    return [f"status: {record['status']}", f"message: {record['message']}"] + [
        f"test {name!r}: {score:g} {status}: {message}" for name, score, status, message in record["tests"]
    ]


def difference(report, key: str) -> str:
    """'' when ``report`` equals the record at ``key`` after normalisation; else a unified diff,
    the snapshot's lines marked ``-`` and the report's ``+``."""
    expected, got = _normalised(records()[key]), record_of(report)
    if got == expected:
        return ""
    diff = difflib.unified_diff(_lines(expected), _lines(got), f"snapshot {key}", "this run", lineterm="", n=1)
    return "\n".join(diff)


def assert_matches(report, key: str, statuses: tuple[str, ...] | None = None) -> None:
    """``report`` is the snapshot's record at ``key``, word for word after normalisation; for an
    unstable key, its status is one of ``statuses`` (which the caller must give)."""
    if os.environ.get("JAXCOURSE_UPDATE_SNAPSHOT") == "1" and key not in unstable():
        _update(key, record_of(report))
        return
    assert key in records(), f"the snapshot has no record {key!r}: {RERECORD}"
    if key in unstable():
        assert statuses, f"{key} is unstable ({unstable()[key]}): give the statuses it may get"
        assert report.status in statuses, f"{key}: {report.status} is not one of {statuses}: {report.message}"
        return
    diff = difference(report, key)
    assert not diff, f"the report differs from its snapshot record {key!r} (a change of behaviour):\n{diff}\n{RERECORD}"


def _update(key: str, record: Record) -> None:
    """Replace (or add) one record, keeping the file's order and layout."""
    current = json.loads(SNAPSHOT.read_text())
    current[key] = record
    SNAPSHOT.write_text(json.dumps(current, indent=1) + "\n")
    _snapshot.cache_clear()


def report_of(student: str, assignment: str, record: Record):
    """A record read back as the ``Report`` grading wrote (its tests' maximum points from the
    spec; the grade id and visibility are not recorded): a class of real reports without grading."""
    from autograder.core.records import TestResult
    from autograder.grading.submission.report import Report
    from autograder.specs import get

    most = {f"{t.name}: {part}": p for t in get(assignment).tasks for part, p in t.points.items()}
    tests = [
        TestResult(name, name.split(":")[0], score, most[name], status, message, "visible")
        for name, score, status, message in record["tests"]
    ]
    return Report(student, assignment, record["status"], record["message"], tests)
