"""The ``jaxcourse`` command. Defaults come from the Python API, so the two never drift."""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path
from typing import Any, Callable, NoReturn, Sequence

from . import classroom, images, lab, specs
from .checks import format_results
from .course import Course, CourseError
from .gradebook import GradebookError
from .limits import LimitsError
from .mesh import MeshSpecError
from .notebook import NotebookError
from .reference import ReferenceError
from .release import ReleaseError, release



class LaunchUsage(Exception):
    """``jaxcourse launch`` was given no command."""


USER_ERRORS = (CourseError, GradebookError, LaunchUsage, LimitsError, MeshSpecError, NotebookError,
               ReferenceError, ReleaseError, classroom.SandboxUnavailable, specs.UnknownAssignment,
               FileNotFoundError)  # fmt: skip


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, not a usage dump: say what is wrong and where to look."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def _assignment(text: str) -> str:
    specs.get(text)  # raises UnknownAssignment with the known names
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="jaxcourse", description="Course tooling: release, check and grade assignments.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    check = sub.add_parser("check", help="grade one notebook and print test, points, status, reason")
    check.add_argument("notebook", type=Path)
    check.add_argument("--assignment", help="assignment name (default: from the notebook)")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(run=_check)

    grade = sub.add_parser("grade", help="grade every submission of an assignment")
    grade.add_argument("assignment")
    grade.add_argument("--submissions", type=Path, help="nbgrader submitted/ layout (default: the course's)")
    grade.add_argument("--out", type=Path, help="where grades.csv and per-student results go")
    grade.add_argument("--jobs", type=_positive, default=_default(classroom.grade_class, "jobs"),
                       help="submissions graded at once (default: the cores over each sandbox's CPU quota)")  # fmt: skip
    grade.add_argument("--sandbox", choices=classroom.SANDBOXES, default=_default(classroom.grade_class, "sandbox"),
                       help="docker: a locked-down container per submission; process: a local process that "
                       "isolates nothing, for development; auto (default): docker when an engine answers")  # fmt: skip
    grade.add_argument("--image", default=_default(classroom.grade_class, "image"),
                       help="the sandbox's image (default %(default)s, built when missing)")  # fmt: skip
    grade.add_argument("--force", action="store_true", help="grade again what an earlier run already graded")
    grade.add_argument("--quiet", action="store_true", help="no progress bar")
    grade.set_defaults(run=_grade)

    run = sub.add_parser("launch", help="run a command in N processes x M simulated devices (jax.distributed)")
    run.add_argument("-n", "--processes", type=_positive, default=_launch_default("num_processes"))
    run.add_argument("-d", "--devices", type=_positive, default=_launch_default("devices_per_process"),
                     help="simulated CPU devices per process")  # fmt: skip
    run.add_argument("--timeout", type=float, default=_launch_default("timeout"), help="seconds before a hang is reported")
    run.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command, e.g. -- python train.py")
    run.set_defaults(run=_launch)

    rel = sub.add_parser("release", help="generate the student version of assignments with nbgrader")
    rel.add_argument("assignment", nargs="?", help="default: every assignment under source/")
    rel.set_defaults(run=_release)

    images.register(sub)  # jaxcourse image build --variant cpu|cuda|tpu
    lab.register(sub)  # jaxcourse lab [--variant cpu] [--port 8888] [--work DIR]
    return parser


def _check(args: argparse.Namespace) -> int:
    from .grade import grader_for
    from .notebook import assignment_of, read

    nb = read(args.notebook)
    name = args.assignment or assignment_of(nb) or _by_filename(args.notebook)
    try:
        course = Course.find(args.notebook.resolve().parent)
    except CourseError:
        course = None  # a student's copy: visible cases, public oracles
    report = grader_for(_assignment(name), course).grade("you", args.notebook)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(format_results(report.tests))
        tail = f" ({report.status}: {report.message})" if report.status != "graded" else ""
        print(f"\nscore {report.score:g} / {report.max_score:g}{tail}")
    return 0


def _by_filename(path: Path) -> str:
    for assignment in specs.ASSIGNMENTS.values():
        if assignment.notebook == path.name:
            return assignment.name
    raise NotebookError(f"cannot tell which assignment {path.name} is for: pass --assignment")


def _grade(args: argparse.Namespace) -> int:
    course = Course.find()
    run = classroom.grade_class(
        _assignment(args.assignment), course, args.submissions, args.out, args.jobs, not args.quiet,
        args.sandbox, args.image, args.force, say=_say,
    )  # fmt: skip
    print(classroom.summary(run))
    return 0


def _say(line: str) -> None:
    print(line, file=sys.stderr)


def _default(fn: Callable[..., Any], name: str) -> Any:
    """A parameter's default in the Python API: the command line takes it from there."""
    return inspect.signature(fn).parameters[name].default


def _launch_default(name: str) -> Any:
    from .launch import launch

    return _default(launch, name)


def _launch(args: argparse.Namespace) -> int:
    from .launch import LaunchError, command_for, run_group

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise LaunchUsage("give the command after --, e.g. jaxcourse launch -n 2 -d 4 -- python train.py")
    try:
        run_group([command_for(command)] * args.processes, args.devices, args.timeout)
    except LaunchError as err:
        print(f"jaxcourse: launch failed: {err}", file=sys.stderr)
        return 1
    return 0


def _release(args: argparse.Namespace) -> int:
    for path in release(Course.find(), args.assignment):
        print(f"released {path}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except USER_ERRORS as err:
        print(f"jaxcourse: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("jaxcourse: interrupted; what was graded is saved, run the command again to go on", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
