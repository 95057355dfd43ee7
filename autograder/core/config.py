"""The course config, ``jaxcourse.toml`` at the course root: one file, several tables, read the
same way by every part that has settings in it (grading limits, class rules, the hub)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from .errors import JaxcourseError

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
