"""Hypothesis strategies for what arrives from someone else's hands as JSON: any JSON value, and a
good document with one part of it replaced by any JSON value or taken out."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
_GONE = object()


@st.composite
def damaged(draw: st.DrawFn, good: Any) -> Any:
    """``good`` with one of its parts, at any depth, replaced by any JSON value or taken out."""
    changed = _damage(draw, good)
    return None if changed is _GONE else changed


def _damage(draw: st.DrawFn, value: Any) -> Any:
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        inner = _damage(draw, value[key])
        return {k: v for k, v in value.items() if k != key} if inner is _GONE else {**value, key: inner}
    if isinstance(value, list) and value and draw(st.booleans()):
        i = draw(st.integers(0, len(value) - 1))
        inner = _damage(draw, value[i])
        return value[:i] + ([] if inner is _GONE else [inner]) + value[i + 1 :]
    return draw(st.just(_GONE) | JSON)
