"""The autograder package's own files, as the grader sees them: their text, for fingerprints (a
result made by other code is made again), and the part of the package that may enter a sandbox.
"""

from __future__ import annotations

import atexit
import compileall
import functools
import shutil
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What runs the student's code and exports it: never the code that decides scores.
UNTRUSTED_SIDE = ("core", "specs", "harness", "untrusted")
# The public facades a notebook imports, as the sandbox has them: ``check`` judges nothing there.
SANDBOX_FACADES = {
    "mesh.py": (ROOT / "mesh.py").read_text(),
    "launch.py": (ROOT / "launch.py").read_text(),
    "trace.py": (ROOT / "trace.py").read_text(),
    "checks.py": '"""The sandbox\'s autograder.checks."""\n\nfrom .untrusted.checks import CheckFailed, check, probe\n\n'
    '__all__ = ["CheckFailed", "check", "probe"]\n',
}


@functools.cache
def code_text(*folders: str) -> str:
    """The text of every module under ``folders`` of the package (all of it when none are named)."""
    roots = [ROOT / f for f in folders] if folders else [ROOT]
    return "".join(p.read_text() for root in roots for p in sorted(root.rglob("*.py")))


@functools.cache
def untrusted_package() -> Path:
    """The untrusted side staged once per grading process, in a temporary folder removed at exit:
    what every sandbox, container or local process, imports as ``autograder``."""
    staging = Path(tempfile.mkdtemp(prefix="jaxcourse-sandbox-code-"))
    atexit.register(shutil.rmtree, staging, True)
    package = staging / "autograder"
    package.mkdir()
    (package / "__init__.py").write_text((ROOT / "__init__.py").read_text())
    for name, text in SANDBOX_FACADES.items():
        (package / name).write_text(text)
    for folder in UNTRUSTED_SIDE:
        shutil.copytree(ROOT / folder, package / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    # Compiled once here: a sandbox mounts this read-only and must not write bytecode, so it would
    # otherwise compile every module again for each submission (ignored by another Python version).
    compileall.compile_dir(package, quiet=1)
    return package


def untrusted_pythonpath() -> str:
    """``PYTHONPATH`` for a local sandbox process run with ``python -S``: the staged untrusted side
    first, then this interpreter's libraries, and no ``.pth`` hooks (an editable install's hook
    would find the trusted side)."""
    libraries = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    return ":".join([str(untrusted_package().parent), *libraries])
