"""Grading limits come from the course config, per assignment, and bad values are refused."""

from __future__ import annotations

import pytest

from autograder.core.config import CONFIG, ConfigError
from autograder.grading.sandbox.limits import Limits, LimitsError, load


def test_defaults_without_a_config(tmp_path):
    assert load(tmp_path, "01_collectives") == Limits()


def test_an_assignment_overrides_the_course_wide_limits(tmp_path):
    (tmp_path / CONFIG).write_text(
        '[sandbox]\nmemory = "3g"\ntimeout = 120\n\n'
        '[assignments.03_multiprocess_training.sandbox]\nmemory = "6g"\ncpus = 2\n'
    )
    assert load(tmp_path, "01_collectives") == Limits(memory="3g", timeout=120)
    assert load(tmp_path, "03_multiprocess_training") == Limits(memory="6g", cpus=2, timeout=120)


def test_jobs_follow_the_cpu_quota():
    assert Limits(cpus=1.0).default_jobs(cores=8) == 8
    assert Limits(cpus=2.0).default_jobs(cores=8) == 4
    assert Limits(cpus=4.0).default_jobs(cores=2) == 1


@pytest.mark.parametrize(
    "text, message",
    [
        ("[sandbox\n", "is not valid TOML"),
        ('[sandbox]\nmemroy = "2g"\n', "unknown limit 'memroy'"),
        ('[sandbox]\nmemory = "lots"\n', "memory = 'lots' must be a size"),
        ("[sandbox]\npids = 4\n", "pids = 4 must be a whole number of at least 16"),
        ("[sandbox]\ntimeout = -1\n", "timeout = -1 must be a positive number"),
        ('[assignments.01_collectives]\nsandbox = "big"\n', "sandbox\\] must be a table"),
    ],
)
def test_bad_config_is_one_line(tmp_path, text, message):
    (tmp_path / CONFIG).write_text(text)
    with pytest.raises((LimitsError, ConfigError), match=message) as err:
        load(tmp_path, "01_collectives")
    assert "\n" not in str(err.value)


def test_every_grader_takes_its_time_limits_from_the_course(course, tmp_path):
    """`jaxcourse check` in the instructor's checkout, the class run, the queue's workers and the
    grading service all make their grader with ``grader_for``, which reads the course's limits."""
    from autograder.core.course import Course
    from autograder.grading.pipeline.grader import grader_for

    from ..helpers.course import ASSIGNMENT

    config = course.root / CONFIG
    before = config.read_text() if config.is_file() else None
    config.write_text(f"[sandbox]\ntest_timeout = 7\n\n[assignments.{ASSIGNMENT}.sandbox]\ntimeout = 42\n")
    try:
        grader = grader_for(ASSIGNMENT, Course(course.root), tmp_path)
        assert (grader.timeout, grader.test_timeout) == (42.0, 7.0)
        assert grader_for(ASSIGNMENT, Course(course.root), tmp_path, timeout=5).timeout == 5  # named: as named
    finally:
        config.unlink() if before is None else config.write_text(before)
