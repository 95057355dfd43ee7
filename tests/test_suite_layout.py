"""The suite's own layout: its folders mirror the package's, conftest files hold fixtures only,
shared helpers are plain modules under ``tests/helpers/``, and nothing imports a test module or a
conftest."""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

from .helpers.course import REPO

TESTS = REPO / "tests"
# Student code, not the suite's: the wrong submissions and the attacks.
STUDENT_CODE = (TESTS / "submissions", TESTS / "adversarial" / "cases")
MODULES = sorted(
    p
    for p in [*TESTS.rglob("*.py"), *(REPO / "benchmarks").glob("*.py")]
    if not any(p.is_relative_to(s) for s in STUDENT_CODE)
)


# Folders of the suite's own that mirror no package folder: what the tests share, the student
# code they grade, the grading snapshot, and the images' tests, which span the packages.
SUITE_FOLDERS = {"helpers", "oracles", "submissions", "adversarial", "snapshots", "docker"}


def _folders(root: Path) -> set[str]:
    return {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}


def _packages(root: Path) -> set[str]:
    return {p.name for p in root.iterdir() if (p / "__init__.py").is_file()}


def test_test_folders_mirror_the_packages():
    """tests/<folder> for a folder of the core, tests/classroom/<folder> for one of the class,
    tests/jaxcourse for the command line."""
    core = _packages(REPO / "autograder") | {"classroom", "jaxcourse"}
    assert _folders(TESTS) - core - SUITE_FOLDERS == set(), "name a test folder after the package folder it tests"
    assert _folders(TESTS / "classroom") - _packages(REPO / "classroom") == set(), "name it after the class's folder"


def _imported(path: Path) -> list[str]:
    """Every name ``path`` imports, in full, relative imports spelt with their dots."""
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (f"{node.module}." if node.module else "")
            names += [base + a.name for a in node.names]
    return names


def _test_code(path: Path) -> list[str]:
    """What ``path`` imports from a test module or a conftest."""
    return [
        name
        for name in _imported(path)
        if any(part == "conftest" or part.startswith("test_") for part in name.split(".") if part)
    ]


def _conftest_problems(path: Path) -> list[str]:
    """Why a conftest holds more than fixtures (and pytest's hooks)."""
    tree = ast.parse(path.read_text())
    problems = [
        f"{n.name} is not a fixture: move it to a module under tests/helpers/"
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.ClassDef)
        and not n.name.startswith("pytest_")
        and not any("fixture" in ast.unparse(d) for d in n.decorator_list)
    ]
    rest = [n for n in tree.body if not isinstance(n, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.ClassDef)]
    if rest[:1] and isinstance(rest[0], ast.Expr) and isinstance(rest[0].value, ast.Constant):
        rest = rest[1:]  # the docstring
    problems += [f"line {n.lineno} runs at import: set-up belongs in a fixture" for n in rest]
    return problems


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(REPO)))
def test_nothing_imports_a_test_module_or_a_conftest(path: Path):
    assert _test_code(path) == []


@pytest.mark.parametrize("path", sorted(TESTS.rglob("conftest.py")), ids=lambda p: str(p.relative_to(REPO)))
def test_conftest_files_hold_fixtures_only(path: Path):
    assert _conftest_problems(path) == []


def test_the_rules_can_fail(tmp_path):
    bad = tmp_path / "conftest.py"
    bad.write_text(
        "from .test_grading import x\nfrom ..conftest import _literal\nimport tests.test_cli\n"
        "from tests import conftest\nuse_cpu_devices(8)\ndef helper(): pass\n"
    )
    assert _test_code(bad) == [".test_grading.x", "..conftest._literal", "tests.test_cli", "tests.conftest"]
    assert len(_conftest_problems(bad)) == 2


# The repository's own packages, whose names a benchmark may import: no type checker reads the
# benchmarks, so a helper that moves breaks one only when someone next runs it.
OWN = ("autograder", "classroom", "jaxcourse", "tests")


def _missing_names(path: Path) -> list[str]:
    """What ``path`` imports by name from the repository's own modules that is not there."""
    missing = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in OWN:
            module = importlib.import_module(node.module)
            for alias in node.names:
                package = hasattr(module, "__path__")  # a name there may be a submodule not yet imported
                if not hasattr(module, alias.name) and not (
                    package and importlib.util.find_spec(f"{node.module}.{alias.name}")
                ):
                    missing.append(f"{node.module}.{alias.name}")
    return missing


@pytest.mark.parametrize("path", sorted((REPO / "benchmarks").glob("*.py")), ids=lambda p: p.name)
def test_each_benchmark_imports_only_what_is_there(path: Path):
    assert _missing_names(path) == []


def test_a_benchmark_that_imports_a_moved_helper_is_found(tmp_path):
    stale = tmp_path / "stale.py"
    stale.write_text("from tests.helpers.hub import User, free_port\nfrom autograder.core import mesh\nimport numpy\n")
    assert _missing_names(stale) == ["tests.helpers.hub.free_port"]
