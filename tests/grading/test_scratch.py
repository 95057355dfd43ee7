"""A submission's scratch folder is removed however the sandbox left it, and a leftover is said,
never raised: one student's files never end a class's grading. (That the docker sandbox removes
what only its container's user can is tests/adversarial's, with a real container.)"""

from __future__ import annotations

import logging
import shutil

from autograder.grading.sandbox import scratch as module
from autograder.grading.sandbox.local import ProcessSandbox
from autograder.grading.sandbox.scratch import scratch


class Recording(ProcessSandbox):
    """A sandbox that records what it was asked to clear, and clears it."""

    name = "recording"

    def __init__(self) -> None:
        self.cleared: list = []

    def clear(self, path) -> None:
        self.cleared.append(path)
        for entry in path.iterdir():
            entry.chmod(0o700)
            shutil.rmtree(entry)


def test_a_locked_folder_is_opened_and_removed(tmp_path):
    box = Recording()
    with scratch("t-", box) as folder:
        locked = folder / "out" / "locked"
        locked.mkdir(parents=True)
        (locked / "inside").write_text("x")
        locked.chmod(0)
    assert not folder.exists() and box.cleared == []


def test_what_the_grader_cannot_remove_the_sandbox_clears(tmp_path, monkeypatch):
    """The grader's user meets files it may not remove (another user's, here made so by a
    refusing rmtree the first time): the sandbox's own clear is asked, and the folder goes."""
    real, calls = shutil.rmtree, []

    def refuses_first(path, *args, **kwargs):
        calls.append(path)
        if len(calls) > 1:
            return real(path, *args, **kwargs)

    monkeypatch.setattr(module.shutil, "rmtree", refuses_first)
    box = Recording()
    with scratch("t-", box) as folder:
        (folder / "out").mkdir()
    assert box.cleared == [folder] and not folder.exists()


def test_a_leftover_is_said_never_raised(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(module.shutil, "rmtree", lambda *args, **kwargs: None)

    class Failing(Recording):
        def clear(self, path) -> None:
            raise OSError("the engine went away")

    with caplog.at_level(logging.WARNING, logger="autograder"), scratch("t-", Failing()) as folder:
        pass
    assert f"could not remove {folder}: remove it by hand" in caplog.text
    shutil.rmtree(folder)
