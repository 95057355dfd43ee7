"""Each of the class's services is started by an entry point the package installs, never by a
module's path in a string: a module moved with its string left behind failed only when a class
started (the hub's services, `hub up`'s grading container, the Swarm's)."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import tomllib
from importlib import metadata

import pytest

from classroom import services

from ..helpers.course import REPO

SCRIPTS = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
NAMES = {name: value for name, value in vars(services).items() if name.isupper()}
# Where the class starts a process: its package and the hub's configuration.
STARTERS = [*sorted((REPO / "classroom").rglob("*.py")), REPO / "docker" / "hub" / "jupyterhub_config.py"]


@pytest.mark.parametrize("name", sorted(NAMES))
def test_each_service_is_an_entry_point_that_runs_a_main(name):
    script = NAMES[name]
    assert script in SCRIPTS, f"{script} is not in pyproject's [project.scripts]"
    module, function = SCRIPTS[script].split(":")
    main = getattr(importlib.import_module(module), function)
    assert inspect.isfunction(main) and not inspect.signature(main).parameters
    # The installed package (the venv's, as an image's) has the same script.
    installed = {entry.name: entry.value for entry in metadata.entry_points(group="console_scripts")}
    assert installed.get(script) == SCRIPTS[script], "the venv is older than pyproject: make venv"


def test_every_entry_point_is_a_service_or_the_command_line():
    assert set(SCRIPTS) == {"jaxcourse", *NAMES.values()}


def _module_paths(path):
    """Strings that start a module of the course's packages with ``python -m``."""
    tree = ast.parse(path.read_text())
    texts = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    return re.findall(r"-m\s+((?:classroom|jaxcourse)\.[\w.]+)", " ".join(texts))


@pytest.mark.parametrize("path", STARTERS, ids=lambda path: str(path.relative_to(REPO)))
def test_no_service_is_started_by_a_module_path(path):
    assert not _module_paths(path), f"{path.relative_to(REPO)} starts a module by its path; use classroom/services.py"


def test_the_scan_finds_a_module_path(tmp_path):
    """The scan above would see the strings this change removed."""
    old = tmp_path / "old.py"
    old.write_text(
        'argv = ["python", "-m", "classroom.hub.grading_service"]\ncommand = [exe, "-m", "classroom.hub.quota"]\n'
    )
    assert _module_paths(old) == ["classroom.hub.grading_service", "classroom.hub.quota"]
