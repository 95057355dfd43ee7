"""A student's edit survives an image upgrade and a restart; untouched course files are updated."""

from __future__ import annotations

import io
import tarfile

import nbformat
import pytest

from ..helpers.images import jovyan_dir, released_notebooks, run_once

pytestmark = pytest.mark.docker

UPGRADE_TAG = "jaxcourse-test:upgrade"


def _upgraded_image(client, base: str, files: dict[str, bytes]) -> str:
    """``base`` with new course files, as a course update would ship them (seconds to build)."""
    dockerfile = [f"FROM {base}", "USER root"]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for i, (dest, data) in enumerate(files.items()):
            info = tarfile.TarInfo(f"f{i}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
            dockerfile.append(f"COPY f{i} {dest}")
        text = "\n".join([*dockerfile, "USER 1000:100", ""]).encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
    buf.seek(0)
    client.images.build(fileobj=buf, custom_context=True, tag=UPGRADE_TAG, rm=True, forcerm=True)
    return UPGRADE_TAG


def _start(client, image: str, work) -> str:
    """One container start (the entrypoint fills the work dir), then exit; its log."""
    code, log = run_once(
        client, image, ["true"], volumes={str(work): {"bind": "/home/jovyan/work", "mode": "rw"}}, network_mode="none"
    )
    assert code == 0, log
    return log


def test_edit_survives_upgrade_and_restart(client, cpu_image, sources, tmp_path):
    work = jovyan_dir(tmp_path / "work")
    _start(client, cpu_image, work)
    rel = released_notebooks(sources)[0].relative_to(sources.release).as_posix()
    mine = work / rel
    nb = nbformat.read(mine, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("answer = 42  # the student's work"))
    nbformat.write(nb, mine)
    edited = mine.read_bytes()

    fixed = nbformat.read(sources.release / rel, as_version=4)
    fixed.cells.insert(0, nbformat.v4.new_markdown_cell("Erratum: a fix shipped with the upgrade."))
    files = {
        f"/opt/jaxcourse/seed/assignments/{rel}": nbformat.writes(fixed).encode(),
        "/opt/jaxcourse/seed/lectures/99_new.ipynb": nbformat.writes(nbformat.v4.new_notebook()).encode(),
    }
    image = _upgraded_image(client, cpu_image, files)
    try:
        log = _start(client, image, work)
        assert mine.read_bytes() == edited, "the upgrade overwrote the student's notebook"
        assert f"kept as you changed them ({rel})" in log, log
        assert (work / "lectures" / "99_new.ipynb").is_file(), "a lecture added by the upgrade was not copied"

        _start(client, image, work)  # a restart after the upgrade
        assert mine.read_bytes() == edited

        mine.unlink()  # the documented way to get the new version
        _start(client, image, work)
        assert "Erratum" in mine.read_text()
    finally:
        client.images.remove(UPGRADE_TAG, force=True)
