"""An earlier revision of this repository beside this checkout, for benchmarks that compare the two
(``--before REV``): its files extracted, and a Python that imports its packages."""

from __future__ import annotations

import site
import subprocess
import sys
import venv as venvs
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def checkout_at(rev: str, where: Path) -> Path:
    """The repository's files at ``rev`` (``git archive``), under ``where``."""
    where.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", rev], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    return where


def python_for(checkout: Path, venv: Path) -> str:
    """A Python whose ``autograder`` is ``checkout``'s, every other package this one's: a bare
    virtual environment whose site-packages link to this environment's packages, but for this
    checkout's own editable install, and whose one path file names the checkout; this
    environment's tools beside it. Its graders' sandboxes and workers start with clean
    environments (a sandbox reads the interpreter's site-packages, with no path file), so neither
    PYTHONPATH nor a path file alone would reach them."""
    venvs.create(venv, with_pip=False)
    packages = Path(next(p for p in site.getsitepackages() if p.endswith("site-packages")))
    theirs = next((venv / "lib").glob("python*/site-packages"))
    for entry in packages.iterdir():
        if not entry.name.startswith(("__editable__", "jaxcourse_autograder")) and not (theirs / entry.name).exists():
            (theirs / entry.name).symlink_to(entry)
    (theirs / "before.pth").write_text(f"{checkout}\n")
    for tool in Path(sys.executable).parent.iterdir():  # nbgrader runs `alembic` from Python's own bin
        if not (venv / "bin" / tool.name).exists():
            (venv / "bin" / tool.name).symlink_to(tool)
    return str(venv / "bin" / "python")
