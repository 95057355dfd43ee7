"""The autograder package's own files, as the grader sees them: their text, for fingerprints (a
result made by other code is made again), and the part of the package that may enter a sandbox.
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What runs the student's code and exports it: never the code that decides scores.
UNTRUSTED_SIDE = ("core", "specs", "harness", "untrusted")
# The public facades a notebook imports, as the sandbox has them: ``check`` judges nothing there.
SANDBOX_FACADES = {
    "mesh.py": (ROOT / "mesh.py").read_text(),
    "launch.py": (ROOT / "launch.py").read_text(),
    "trace.py": (ROOT / "trace.py").read_text(),
    "checks.py": '"""The sandbox\'s autograder.checks."""\n\nfrom .untrusted.checks import CheckFailed, check\n\n'
    '__all__ = ["CheckFailed", "check"]\n',
}


@functools.cache
def code_text(*folders: str) -> str:
    """The text of every module under ``folders`` of the package (all of it when none are named)."""
    roots = [ROOT / f for f in folders] if folders else [ROOT]
    return "".join(p.read_text() for root in roots for p in sorted(root.rglob("*.py")))


def stage_untrusted_side(target: Path) -> Path:
    """A copy of the package holding only its untrusted side, at ``target/autograder``: what a
    sandbox container gets to import, in place of the whole package."""
    package = target / "autograder"
    if package.is_dir():
        shutil.rmtree(package)
    package.mkdir(parents=True)
    (package / "__init__.py").write_text((ROOT / "__init__.py").read_text())
    for name, text in SANDBOX_FACADES.items():
        (package / name).write_text(text)
    for folder in UNTRUSTED_SIDE:
        shutil.copytree(ROOT / folder, package / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return package
