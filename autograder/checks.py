"""Public: ``check(fn)`` judges a notebook's function as the grader does (see the README)."""

from .grading.self_check import CheckFailed, CheckResult, check

__all__ = ["CheckFailed", "CheckResult", "check"]
