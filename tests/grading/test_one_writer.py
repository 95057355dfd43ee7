"""Every file of a grade is written by the recorder's module alone: results.json and the gradebook's
row (``gradebook.keep``, ``record``, ``write_results``), ``grades.csv`` (``write_csv``), the
feedback pages (``feedback.write``) and the class's journal (``JOURNAL``). The other ways of
grading (``jaxcourse grade``, the class's service, formgrader's Autograde) hand it reports, so its
two rules (the latest submission wins; feedback as the class allows) cannot be skipped by one of
them. Read from the source of every package module, as an import contract reads imports."""

from __future__ import annotations

import ast
from pathlib import Path

from ..helpers.course import REPO

PACKAGES = ("autograder", "classroom", "jaxcourse")
RECORDER = "autograder/grading/record/recorder.py"
# The writers, by the module that defines them: calling or importing one is writing a grade.
WRITERS = {
    "autograder.grading.record.gradebook": {"keep", "record", "write_results", "write_csv"},
    "autograder.grading.reports.feedback": {"write"},
    "autograder.grading.record.recorder": {"JOURNAL"},
}
# Where a writer may appear besides the recorder: where it is defined.
DEFINED = {"autograder/grading/record/gradebook.py", "autograder/grading/reports/feedback.py"}
# A page put where the student reads it (the exchange's ``write_feedback``) only as the recorder
# hands it over (the delivery it is given), or as released after grading (pages it wrote).
DELIVERIES = {
    ("classroom/grading/service.py", "_delivery"),
    ("classroom/feedback_release.py", "to_exchange"),
    ("classroom/exchange/store.py", "write_feedback"),  # its definition
}


def _module_of(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts)


def _absolute(module: str | None, level: int, here: str) -> str:
    """An import's module, with a relative one resolved from ``here`` (a module's dotted name)."""
    if not level:
        return module or ""
    base = here.split(".")[:-level]
    return ".".join(base + ([module] if module else []))


def writes(source: str, here: str) -> list[str]:
    """Each use of a grade's writer in ``source`` (module ``here``): ``gradebook.keep(...)``, a
    writer imported by name, ``recorder.JOURNAL``; as "line: name"."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}  # a local name -> the writer module it stands for
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(node.module, node.level, here)
            for alias in node.names:
                if f"{module}.{alias.name}" in WRITERS:
                    aliases[alias.asname or alias.name] = f"{module}.{alias.name}"
                elif alias.name in WRITERS.get(module, ()):
                    found.append(f"{node.lineno}: {module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in WRITERS and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        named = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
        if named and node.attr in WRITERS[aliases[node.value.id]]:
            found.append(f"{node.lineno}: {aliases[node.value.id]}.{node.attr}")
    return found


def deliveries(source: str) -> list[tuple[str, int]]:
    """Each function that puts a feedback page in the exchange (calls or defines ``write_feedback``),
    with the line."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Attribute) and node.attr == "write_feedback":
                    found.append((function.name, node.lineno))
            if function.name == "write_feedback":
                found.append((function.name, function.lineno))
    return found


def test_a_page_reaches_the_exchange_only_as_the_recorder_hands_it_over():
    elsewhere = [
        f"{path.relative_to(REPO)}:{line} in {function}"
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        for function, line in deliveries(path.read_text())
        if (path.relative_to(REPO).as_posix(), function) not in DELIVERIES
    ]
    assert elsewhere == [], f"feedback written to the exchange outside the recorder's delivery: {elsewhere}"


def test_only_the_recorder_writes_a_grade():
    elsewhere = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            if relative == RECORDER or relative in DEFINED:
                continue
            found = writes(path.read_text(), _module_of(path))
            if found:
                elsewhere[relative] = found
    assert elsewhere == {}, (
        f"grade files written outside {RECORDER}: {elsewhere}; hand the report to the recorder "
        "(recorder_for(...).record, .refuse, .finish, .journal) instead"
    )


def test_the_scan_finds_each_way_of_writing():
    """The scan can fail: a writer called through its module, imported by name, relatively, or
    the journal's name, in a module of the class."""
    here = "classroom.hub.somewhere"
    source = """
from autograder.grading.record import gradebook
from autograder.grading.record.gradebook import write_csv
from autograder.grading.reports import feedback as pages
from autograder.grading.record.recorder import JOURNAL
gradebook.keep(root, "nb", out, report, None)
pages.write(folder, report)
"""
    assert writes(source, here) == [
        "3: autograder.grading.record.gradebook.write_csv",
        "5: autograder.grading.record.recorder.JOURNAL",
        "6: autograder.grading.record.gradebook.keep",
        "7: autograder.grading.reports.feedback.write",
    ]
    relative = "from ..grading.record import gradebook\ngradebook.write_results(path, report)\n"
    assert writes(relative, "autograder.delivery.release") == ["2: autograder.grading.record.gradebook.write_results"]
    assert writes("from autograder.grading.record import gradebook\ngradebook.load(path)\n", here) == []
    refusal = "def refuse(self, submission, reason):\n    self.store.write_feedback(submission, pages)\n"
    assert deliveries(refusal) == [("refuse", 2)]
