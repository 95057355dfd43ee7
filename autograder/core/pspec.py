"""PartitionSpecs as plain data: the JSON codec both sides of the sandbox use, one normal form,
and one printer, so a spec reads the same in every message.

JSON form: a list whose entries are ``None``, an axis name, or a list of axis names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jax

SpecJSON = list[Any]  # entries: None | str | list[str]


def to_json(spec: Sequence[Any]) -> SpecJSON:
    """A PartitionSpec (or a tuple of its entries) as JSON."""
    return [list(e) if isinstance(e, tuple) else e for e in spec]


def from_json(entries: Sequence[Any]) -> jax.sharding.PartitionSpec:
    import jax

    return jax.P(*(tuple(e) if isinstance(e, list) else e for e in entries))


def normalize(entries: Sequence[Any], ndim: int) -> SpecJSON:
    """One spelling per sharding: single-name tuples as names, trailing ``None`` dropped."""
    out: SpecJSON = []
    for entry in list(entries)[:ndim]:
        if isinstance(entry, (list, tuple)):
            entry = list(entry) if len(entry) > 1 else (entry[0] if entry else None)
        out.append(entry)
    while out and out[-1] is None:
        out.pop()
    return out


def show(entries: Sequence[Any]) -> str:
    """``P('x', None)`` or ``P(('x', 'y'),)``, as a student would write it."""
    return "P(" + ", ".join(repr(tuple(e)) if isinstance(e, list) else repr(e) for e in entries) + ")"


def of_array(value: Any) -> SpecJSON | None:
    """The normal form of a jax.Array's (or an abstract value's) named sharding, if it has one."""
    spec = getattr(getattr(value, "sharding", None), "spec", None)
    return None if spec is None else normalize(to_json(tuple(spec)), len(value.shape))
