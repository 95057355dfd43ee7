"""Where what the package says goes: progress on the command's stream, warnings on stderr, bare
lines; other libraries' loggers untouched."""

from __future__ import annotations

import io
import logging
import sys

import pytest

from autograder.core import logs


@pytest.fixture(params=["autograder", "classroom", "jaxcourse"])
def package_logger(request):
    """A module's logger in each of the three packages: the core's, the class's, the command's."""
    loggers = [logging.getLogger(name) for name in logs.SAID_BY]
    kept = [(logger.handlers[:], logger.level) for logger in loggers]
    yield logging.getLogger(f"{request.param}.some.module")
    for logger, (handlers, level) in zip(loggers, kept):
        logger.handlers[:], logger.level = handlers, level


def test_progress_goes_to_stdout_and_warnings_to_stderr_as_bare_lines(package_logger, capsys):
    logs.configure()
    package_logger.info("the class is up")
    package_logger.warning("jaxcourse: the process sandbox isolates nothing")
    logging.getLogger("jax._src.somewhere").info("chatter")
    out, err = capsys.readouterr()
    assert out == "the class is up\n"
    assert err == "jaxcourse: the process sandbox isolates nothing\n"


def test_a_command_whose_stdout_is_its_result_says_everything_on_stderr(package_logger, capsys):
    logs.configure("stderr")
    package_logger.info("graded 3 of 40")
    package_logger.warning("a leftover")
    assert capsys.readouterr() == ("", "graded 3 of 40\na leftover\n")


def test_the_stream_is_the_one_in_place_when_a_line_is_said(package_logger, monkeypatch):
    """Configured once at a command's start, the lines still reach a stream swapped in later (a
    test's capture, a redirect), not one closed since."""
    logs.configure()
    later = io.StringIO()
    monkeypatch.setattr(sys, "stdout", later)
    package_logger.info("after the swap")
    assert later.getvalue() == "after the swap\n"
