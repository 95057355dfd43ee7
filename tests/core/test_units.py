"""Numbers with units: three significant figures, SI's decimal prefixes, and the time units a
reader expects of a program's step."""

from __future__ import annotations

import pytest

from autograder.core.units import duration, quantity


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (14680064, "B", "14.7 MB"),
        (68719476736, "FLOP", "68.7 GFLOP"),
        (3088, "B", "3.09 kB"),
        (512, "B", "512 B"),
        (0, "B", "0 B"),
        (0.0, "FLOP", "0 FLOP"),
        (999, "B", "999 B"),
        (1000, "B", "1.00 kB"),
        (999_600, "B", "1.00 MB"),  # rounding up carries into the next prefix
        (12_345, "B", "12.3 kB"),
        (123_456, "B", "123 kB"),
        (627146756, "B", "627 MB"),
        (2.5e18, "FLOP", "2.50 EFLOP"),
        (12.5, "B", "12.5 B"),
        (0.5, "B", "0.500 B"),
        (-3088, "B", "-3.09 kB"),
    ],
)
def test_quantity(value: float, unit: str, text: str) -> None:
    assert quantity(value, unit) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.000373, "0.373 ms"),
        (12.5e-6, "12.5 µs"),
        (1.25, "1.25 s"),
        (0.5, "0.500 s"),
        (0.0999, "99.9 ms"),
        (0.09996, "0.100 s"),  # rounding up carries into the next unit
        (3e-9, "3.00 ns"),
        (1234.0, "1230 s"),
        (0, "0 s"),
    ],
)
def test_duration(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_not_a_number_is_shown_as_it_is() -> None:
    assert quantity(float("inf"), "B") == "inf B"
    assert duration(float("nan")) == "nan s"
