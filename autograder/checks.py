"""Public: ``check(fn)`` judges a notebook's function as the grader does (docs/student.md);
``probe(fn)`` shows what it compiles to (collectives, bytes per device) without a verdict."""

from .grading.student.probe import Probe, probe
from .grading.student.self_check import CheckFailed, CheckResult, check

__all__ = ["CheckFailed", "CheckResult", "Probe", "check", "probe"]
