"""Execute course notebooks as CI and readers do: a fresh kernel, 8 simulated devices, and JAX's
deprecation warnings turned into errors so that outdated API use fails loudly."""

from __future__ import annotations

import time
from pathlib import Path

import nbformat

# Runs before the notebook's own cells; a cell that triggers a deprecated JAX path then fails.
STRICT_WARNINGS = (
    "import warnings\n"
    "warnings.filterwarnings('error', category=DeprecationWarning)\n"
    "warnings.filterwarnings('error', category=FutureWarning)\n"
)


def execute(path: Path, timeout: float = 600, strict: bool = True) -> tuple[nbformat.NotebookNode, float]:
    """Run ``path`` top to bottom in its own directory; return the executed notebook and seconds."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    if strict:
        nb.cells.insert(0, nbformat.v4.new_code_cell(STRICT_WARNINGS))
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    start = time.perf_counter()
    client.execute()
    if strict:
        nb.cells.pop(0)
    return nb, time.perf_counter() - start
