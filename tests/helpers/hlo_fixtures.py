"""XLA's own test modules, kept under ``tests/core/fixtures/`` with the test each comes from."""

from __future__ import annotations

import re
from pathlib import Path

FIXTURES = Path(__file__).parent.parent / "core" / "fixtures"


def hlo_fixture(name: str, partitions: int | None = None) -> str:
    """A fixture's module without its header comment; ``partitions`` adds ``num_partitions`` to a
    module from a test that gave no replica groups (every device is then in the one group)."""
    text = "\n".join(line for line in (FIXTURES / name).read_text().splitlines() if not line.startswith("//"))
    if partitions is not None:
        text = re.sub(r"^(HloModule \S+?)(,|\n)", rf"\1, num_partitions={partitions}\2", text, count=1, flags=re.M)
    return text
