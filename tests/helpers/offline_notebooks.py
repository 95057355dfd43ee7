"""Every lecture and released assignment run offline in the cpu image, two at a time
(``tests/docker/test_cpu_image.py``). It starts with the session (``tests/helpers/background.py``)
and its test reads the executed notebooks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.engine import images

from . import background
from .images import jovyan_dir, released_notebooks

TEST = "tests/docker/test_cpu_image.py::test_released_notebooks_run_without_network"


@dataclass(frozen=True)
class Run:
    container: object
    targets: list[str]  # the notebooks' paths in the image; the i-th is executed into out/i.ipynb
    out: Path


def start(client, image: str, sources: images.Sources, out: Path) -> Run:
    jovyan_dir(out)
    targets = [
        f"/opt/jaxcourse/seed/assignments/{p.relative_to(sources.release).as_posix()}"
        for p in released_notebooks(sources)
    ]
    targets += [f"/opt/jaxcourse/seed/lectures/{p.name}" for p in sorted(sources.course.glob("*.ipynb"))]
    # Two at a time, one a core: a notebook's kernel mostly waits on one thread (start-up, imports,
    # small programs), so the pair takes about half as long; xargs exits non-zero if either fails.
    pairs = " ".join(f"{i} {t}" for i, t in enumerate(targets))
    script = (
        f"printf '%s %s\\n' {pairs} | xargs -P 2 -n 2 sh -c '"
        "exec jupyter nbconvert --to notebook --execute --allow-errors --ExecutePreprocessor.timeout=600 "
        '--output-dir /out --output "$0.ipynb" "$1"\''
    )
    container = background.start(
        client, image, ["bash", "-c", script], network_mode="none", volumes={str(out): {"bind": "/out", "mode": "rw"}}
    )
    return Run(container, targets, out)
