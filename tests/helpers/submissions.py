"""The known-wrong submissions (``tests/submissions/<assignment>/*.py``) and the attacks on the
sandbox (``tests/adversarial/cases/*.py``): student code that must lose what it says, for the
reason it says.

Each file is a module docstring (why it must fail), functions that replace the reference's, and
module-level literals:

``EXPECTED``   test name -> the score it keeps (every other test keeps full marks), or
``STATUS``     the status a notebook that cannot be graded gets (an attack may give a tuple);
``REASONS``    wrong submissions: test name -> words its message must contain, one per key of
               ``EXPECTED``;
``MESSAGE``    words (wrong submissions) or a pattern (attacks) the report's message must hold;
``MESSAGE_OF`` attacks: test name -> a pattern its message must match, for every key of ``EXPECTED``;
``EXTRA_CELL`` a code cell appended to the notebook;
``HANG``       03's: words the hang report of the 2-process layout must contain;
``HONEST``     ``True`` for an honest program spelled differently from the reference: it keeps at
               least 85% of each part it writes, and ``EXPECTED`` (possibly empty) says what it loses.

``tests/test_submission_files.py`` holds every file to these rules.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from .course import functions

SUBMISSIONS = Path(__file__).resolve().parents[1] / "submissions"
CASES = Path(__file__).resolve().parents[1] / "adversarial" / "cases"
_UNSET = object()


def literal(text: str, name: str, default: Any = None) -> Any:
    """The value of the module-level literal ``name = ...`` in ``text``, or ``default``."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    return default


def literal_names(text: str) -> set[str]:
    """Every name a module-level assignment in ``text`` binds."""
    return {
        t.id for n in ast.parse(text).body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
    }


class WrongSubmission:
    """One file of student code and what grading it must produce (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        text = path.read_text()
        self.path = path
        self.name = path.stem
        self.docstring: str | None = ast.get_docstring(ast.parse(text))
        self.names = literal_names(text)
        self.functions = functions(text)
        self.expected: dict[str, float] = literal(text, "EXPECTED", {})
        self.reasons: dict[str, str] = literal(text, "REASONS", {})
        self.status: str | tuple[str, ...] = literal(text, "STATUS", "graded")
        self.message: str = literal(text, "MESSAGE", "")
        self.message_of: dict[str, str] = literal(text, "MESSAGE_OF", {})
        self.extra_cell: str | None = literal(text, "EXTRA_CELL")
        # function -> the least its projected time at scale may be, as a multiple of the reference's
        self.at_scale: dict[str, float] = literal(text, "AT_SCALE", {})
        self.hang: str | None = literal(text, "HANG")
        self.honest: bool = literal(text, "HONEST", False) is True

    @property
    def statuses(self) -> tuple[str, ...]:
        """The statuses it may get: ``STATUS``, a tuple where more than one limit may stop it first."""
        return self.status if isinstance(self.status, tuple) else (self.status,)

    def __repr__(self) -> str:
        return f"WrongSubmission({self.name})"


def submissions_dir(assignment: str) -> Path:
    return SUBMISSIONS / assignment


def wrong_submissions(assignment: str) -> list[WrongSubmission]:
    return [WrongSubmission(p) for p in sorted(submissions_dir(assignment).glob("*.py"))]


def wrong_submission(assignment: str, name: str) -> WrongSubmission:
    return WrongSubmission(submissions_dir(assignment) / f"{name}.py")


def submitted(assignment: str, name: str, function: str) -> Any:
    """A known-wrong submission's function, among what its notebook gives a student."""
    import importlib
    import importlib.util

    import jax
    import jax.numpy as jnp

    from autograder.specs import get

    given = importlib.util.find_spec(f"autograder.specs.given.{get(assignment).solutions}")
    namespace = {"jax": jax, "jnp": jnp, **(vars(importlib.import_module(given.name)) if given else {})}
    exec(wrong_submission(assignment, name).functions[function], namespace)
    return namespace[function]


def adversarial_cases() -> list[WrongSubmission]:
    return [WrongSubmission(p) for p in sorted(CASES.glob("*.py"))]


# ---------------------------------------------------------------- the rules each file must keep

SUBMISSION_NAMES = {"EXPECTED", "REASONS", "STATUS", "MESSAGE", "EXTRA_CELL", "HANG", "HONEST", "AT_SCALE"}
CASE_NAMES = {"EXPECTED", "STATUS", "MESSAGE", "MESSAGE_OF", "EXTRA_CELL"}


def _words(value: object) -> bool:
    return isinstance(value, str) and value.strip() != ""


def submission_problems(wrong: WrongSubmission) -> list[str]:
    """Why a wrong submission does not say what grading it must produce; [] when it does."""
    problems = []
    if not _words(wrong.docstring):
        problems.append("no docstring saying why it must fail")
    if unknown := wrong.names - SUBMISSION_NAMES:
        problems.append(f"unknown names {sorted(unknown)} (a typo is silently ignored)")
    if "HONEST" in wrong.names and not wrong.honest:
        problems.append("HONEST is True or absent")
    if wrong.status == "graded":
        if not wrong.expected and not wrong.honest:
            problems.append("graded, but EXPECTED names no test it loses")
        if wrong.honest and "EXPECTED" not in wrong.names:
            problems.append("an honest variant says what it loses: EXPECTED = {} for nothing")
        if set(wrong.reasons) != set(wrong.expected):
            problems.append(
                f"REASONS {sorted(wrong.reasons)} must have exactly EXPECTED's keys {sorted(wrong.expected)}"
            )
        if empty := sorted(k for k, v in wrong.reasons.items() if not _words(v)):
            problems.append(f"REASONS for {empty} are not words")
        if "MESSAGE" in wrong.names:
            problems.append("MESSAGE is for a STATUS submission; a graded one has REASONS")
    else:
        if not isinstance(wrong.status, str):
            problems.append(f"STATUS {wrong.status!r} is not one status")
        if not _words(wrong.message):
            problems.append(f"STATUS {wrong.status!r} needs a MESSAGE, words its report's message must hold")
        if wrong.expected or wrong.reasons:
            problems.append("a submission that cannot be graded loses everything: no EXPECTED or REASONS")
    return problems


def case_problems(case: WrongSubmission) -> list[str]:
    """Why an attack does not say what grading it must produce; [] when it does."""
    problems = []
    if not _words(case.docstring):
        problems.append("no docstring saying what it tries and what must happen")
    if unknown := case.names - CASE_NAMES:
        problems.append(f"unknown names {sorted(unknown)} (a typo is silently ignored)")
    if "graded" not in case.statuses:
        if not _words(case.message):
            problems.append(f"STATUS {case.status!r} needs a MESSAGE, a pattern its report's message must match")
        if case.expected or case.message_of:
            problems.append("an attack that cannot be graded loses everything: no EXPECTED or MESSAGE_OF")
        return problems
    if len(case.statuses) != 1:
        problems.append("a graded attack has one STATUS")
    if "EXPECTED" not in case.names:
        problems.append("graded, but no EXPECTED: {} for full marks, or the tests it loses")
    if uncovered := sorted(set(case.expected) - set(case.message_of)):
        problems.append(f"MESSAGE_OF must say why each test in EXPECTED fails; it misses {uncovered}")
    if empty := sorted(k for k, v in case.message_of.items() if not _words(v)):
        problems.append(f"MESSAGE_OF for {empty} are not patterns")
    if "MESSAGE" in case.names:
        problems.append("a graded attack's report message is exactly '': it has no MESSAGE")
    return problems


def selected_wrong(request: Any, test: str = "test_wrong_submission_loses_exactly_its_points") -> list[dict[str, Any]]:
    """The parameters of each of ``request``'s module's ``test`` that this session runs: a fixture
    that grades them ahead, two at a time, grades those only (``-k`` still grades one)."""
    return [
        item.callspec.params
        for item in request.session.items
        if item.module is request.module and getattr(item, "originalname", "") == test
    ]
