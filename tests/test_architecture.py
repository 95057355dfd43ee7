"""The package's architecture, held by tests: folders by role with arrows one way, no import
cycle, each kind of task registered on both sides, small modules, and a sandbox that gets the
untrusted side only. ``make lint`` runs the same import contracts; these tests prove the
contracts can fail, and check what a contract cannot express."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from autograder.core.kinds import KINDS
from autograder.grading.sandbox.package import UNTRUSTED_SIDE, untrusted_package, untrusted_pythonpath
from autograder.harness.calls import CALLS
from autograder.trusted.judges import JUDGES

from .helpers.course import REPO

PACKAGES = ("autograder", "classroom", "jaxcourse")  # the core, the class, the command line
MAX_LINES = 400


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """import-linter with the project's contracts, on the package found under ``root``."""
    lint = Path(sys.executable).parent / "lint-imports"
    return subprocess.run(
        [str(lint), "--config", str(REPO / "pyproject.toml")],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )


def test_the_import_contracts_hold():
    done = _lint_imports(REPO)
    assert done.returncode == 0, done.stdout
    assert "9 kept, 0 broken" in done.stdout, done.stdout


@pytest.mark.parametrize(
    "module, line, contract",
    [
        ("autograder/untrusted/runner.py", "from ..trusted import policy", "The untrusted side never imports"),
        ("autograder/core/tasks.py", "from ..grading.sandbox import limits", "The core's layers"),
        ("autograder/trusted/verdict.py", "from .. import checks", "The public facades are for notebooks"),
        (
            "autograder/grading/record/batch.py",
            "from classroom.grading import class_run",
            "The core imports nothing of the class",
        ),
        ("autograder/delivery/release.py", "import jaxcourse", "Three packages"),
        ("classroom/exchange/store.py", "from ..hub import settings", "The class's layers"),
        ("classroom/hub/deploy.py", "from classroom.grading import service", "The class's layers"),
        ("classroom/queue/jobs.py", "from autograder.grading.record import recorder", "The queue is transport"),
        ("autograder/grading/pipeline/grader.py", "from ..reports import feedback", "Grading's folders"),
        ("autograder/grading/sandbox/seal.py", "from ..pipeline import plan", "Grading's folders"),
        ("autograder/grading/record/batch.py", "from ..student import self_check", "Grading's folders"),
        (
            "autograder/grading/reports/leaderboard.py",
            "from ..sandbox import limits",
            "The reports read stored results only",
        ),
    ],
)
def test_a_forbidden_import_breaks_a_contract(tmp_path, module, line, contract):
    for package in PACKAGES:
        shutil.copytree(REPO / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    path = tmp_path / module
    text = path.read_text()
    cut = text.index("\nfrom ")  # after the docstring and the __future__ import
    path.write_text(text[:cut] + f"\n{line}  # noqa" + text[cut:])
    done = _lint_imports(tmp_path)
    assert done.returncode != 0, done.stdout
    assert f"{contract}" in done.stdout and "BROKEN" in done.stdout, done.stdout


def test_no_import_cycles():
    graph = grimp.build_graph(*PACKAGES)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for other in sorted(edges[module]):
            if state.get(other) == 1:
                cycles.append(path[path.index(other) :] + [other] if other in path else [module, other])
            elif other not in state:
                visit(other, [*path, other])
        state[module] = 2

    for module in sorted(graph.modules):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_every_kind_is_registered_on_both_sides():
    assert set(CALLS) == set(KINDS) == set(JUDGES)
    for kind in KINDS:
        assert callable(CALLS[kind].signature) and callable(CALLS[kind].in_sandbox), kind
        assert isinstance(CALLS[kind].REPORTS_MESH, bool), kind
        judge = JUDGES[kind]
        assert callable(judge.reference_record) and callable(judge.measure) and callable(judge.score), kind


def test_no_module_is_over_400_lines():
    long = {
        str(p.relative_to(REPO)): n
        for package in PACKAGES
        for p in (REPO / package).rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def _in_staged_package(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run against the staged untrusted side as the local sandbox runs it: -S, so that
    this checkout's editable install, which would find the rest, is not loaded."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": untrusted_pythonpath(), "PYTHONSAFEPATH": "1", "HOME": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-S", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def _autograder_imports(notebook: Path) -> list[str]:
    """Every import of the package a notebook's code cells make, as source lines."""
    found = []
    for cell in json.loads(notebook.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        for node in ast.walk(ast.parse("".join(cell["source"]))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(n.split(".")[0] == "autograder" for n in names):
                found.append(ast.unparse(node))
    return found


@pytest.mark.parametrize("notebook", sorted((REPO / "assignments" / "source").glob("*/*.ipynb")), ids=lambda p: p.stem)
def test_an_assignment_imports_only_what_the_sandbox_has(tmp_path, notebook):
    """A graded notebook's cells run in the sandbox: an import of the trusted side would fail
    every student there (and only there), so it fails here first."""
    imports = _autograder_imports(notebook)
    assert imports, "the setup cell imports check"
    done = _in_staged_package(tmp_path, "\n".join(imports))
    assert done.returncode == 0, done.stderr


def test_the_sandbox_gets_the_untrusted_side_only(tmp_path):
    """What a sandbox container mounts: no code that decides scores, yet everything a notebook's
    cells and the runner import."""
    package = untrusted_package()
    folders = {p.name for p in package.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == set(UNTRUSTED_SIDE)
    probe = (
        "import importlib.util, autograder\n"
        "from autograder.checks import CheckFailed, check, probe\n"
        "from autograder.mesh import use_cpu_devices, use_devices\n"
        "from autograder.launch import launch\n"
        "from autograder.trace import hlo_census\n"
        "import autograder.untrusted.runner\n"
        "assert check(print) is None\n"
        "try:\n    probe(print)\nexcept CheckFailed as err:\n    assert 'measured by the grader' in str(err)\n"
        "else:\n    raise AssertionError('probe measured in the sandbox')\n"
        "for name in ('autograder.trusted', 'autograder.grading', 'autograder.delivery', 'classroom', 'jaxcourse'):\n"
        "    assert importlib.util.find_spec(name) is None, name\n"
        "print(autograder.__file__)\n"
    )
    done = _in_staged_package(tmp_path, probe)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(package / "__init__.py")


def test_no_cluster_engine_is_mounted_into_a_sandbox(tmp_path):
    """srun and mpirun belong to running a class: the sandbox's launcher starts local processes
    only, and asked for an engine there it finds none."""
    package = untrusted_package()
    assert not [p.name for p in package.rglob("*engine*.py")]
    done = _in_staged_package(tmp_path, "from autograder.launch import launch\nlaunch(print, 2, 1, via='slurm')\n")
    assert done.returncode != 0 and "No module named 'classroom'" in done.stderr, done.stderr
