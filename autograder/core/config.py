"""The course config, ``jaxcourse.toml`` at the course root: one file, several tables, read the
same way by every part that has settings in it (grading limits, class rules, the hub). Each part
declares its settings as a frozen dataclass of defaults and a rule per key (``Rule``); ``load``
layers the course's tables over the defaults and names the first bad key, where it is written,
and what it must be."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import JaxcourseError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

CONFIG = "jaxcourse.toml"


class ConfigError(JaxcourseError):
    """jaxcourse.toml cannot be read, or a table in it is not a table."""


def read(root: Path) -> dict[str, Any]:
    """The whole config, or {} where the course has none."""
    path = root / CONFIG
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path} is not valid TOML: {err}") from None


def layered(root: Path, table: str, assignment: str) -> list[tuple[dict[str, Any], str]]:
    """``[table]``, then ``[assignments.<assignment>.table]``, each with where it is written (for
    messages): an assignment's own settings override the course-wide ones."""
    config, path = read(root), root / CONFIG
    found = [(config.get(table, {}), f"{path} [{table}]")]
    own = config.get("assignments", {}).get(assignment, {}).get(table, {})
    found.append((own, f"{path} [assignments.{assignment}.{table}]"))
    for value, where in found:
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a table")
    return found


@dataclass(frozen=True)
class Rule:
    """What a setting's value must be: a test, and the words for it in a message."""

    ok: Callable[[Any], bool]
    need: str


_SIZE = re.compile(r"^\d+(\.\d+)?[kmg]$")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def size(example: str) -> Rule:
    return Rule(lambda v: isinstance(v, str) and bool(_SIZE.match(v.lower())), f'a size such as "{example}"')


def whole(least: int) -> Rule:
    return Rule(lambda v: _whole(v) and v >= least, f"a whole number of at least {least}")


def one_of(*choices: str) -> Rule:
    return Rule(lambda v: v in choices, f"one of {', '.join(choices)}")


POSITIVE = Rule(lambda v: isinstance(v, int | float) and not isinstance(v, bool) and v > 0, "a positive number")


S = TypeVar("S", bound="DataclassInstance")  # a frozen dataclass of defaults


def load(
    defaults: S,
    rules: Mapping[str, Rule],
    root: Path,
    table: str,
    assignment: str = "",
    error: type[JaxcourseError] = ConfigError,
    key: str = "key",
) -> S:
    """``defaults`` with ``[table]`` and ``[assignments.<assignment>.table]`` laid over them, each
    value held to its key's rule; ``error`` names the first that is not known (a ``key``) or not
    what its rule asks."""
    settings = defaults
    for values, where in layered(root, table, assignment):
        for name, value in values.items():
            if name not in rules:
                raise error(f"{where}: unknown {key} {name!r}; known: {', '.join(rules)}")
            if not rules[name].ok(value):
                raise error(f"{where}: {name} = {value!r} must be {rules[name].need}")
        settings = replace(settings, **values)
    return settings
