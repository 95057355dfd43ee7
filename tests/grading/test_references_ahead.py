"""The reference records are computed ahead, beside the first submissions' sandboxes, by one
thread: the submissions that start meanwhile (a class graded two or more at a time) wait where
they need them, and start no thread of their own."""

from __future__ import annotations

import threading

from autograder.core.course import Course
from autograder.grading.pipeline import grader as grader_module
from autograder.grading.pipeline.grader import grader_for

from ..helpers.course import ASSIGNMENT, REPO


def test_one_thread_computes_the_references_however_many_submissions_start(tmp_path, monkeypatch):
    release, computed = threading.Event(), []

    def ensure(*args, **kwargs):
        computed.append(threading.current_thread())
        release.wait(30)
        return {"case": "record"}

    monkeypatch.setattr(grader_module.references, "ensure", ensure)
    grader = grader_for(ASSIGNMENT, Course(REPO), tmp_path)  # the checkout's solutions: nothing released
    before = set(threading.enumerate())
    for _ in range(20):  # twenty submissions start while the references are still being computed
        grader.start_references()
    started = set(threading.enumerate()) - before
    release.set()
    for thread in started:
        thread.join(30)
    assert len(started) == 1 and computed == list(started), (started, computed)
    assert grader.references == {"case": "record"}
    grader.start_references()  # computed: a later submission starts nothing
    assert set(threading.enumerate()) == before
