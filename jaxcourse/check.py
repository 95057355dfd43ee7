"""``jaxcourse check NOTEBOOK``: grade one notebook and print test, points, status, reason; then
each function's program at its realistic size, projected on real machines beside the reference's."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from autograder.grading.reports import scale_view
from autograder.grading.student.self_check import check_notebook, format_results

from .args import Subparsers


def register(sub: Subparsers) -> None:
    check = sub.add_parser("check", help="grade one notebook and print test, points, status, reason")
    check.add_argument("notebook", type=Path)
    check.add_argument("--assignment", help="assignment name (default: from the notebook)")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    report = check_notebook(args.notebook, args.assignment)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(format_results(report.tests))
        projected = scale_view.text(report.at_scale)
        if projected:
            print(f"\n{projected}")
        tail = f" ({report.status}: {report.message})" if report.status != "graded" else ""
        print(f"\nscore {report.score:g} / {report.max_score:g}{tail}")
    return 0
