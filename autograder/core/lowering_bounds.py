"""What a compiler chose, held to what any correct lowering does. XLA's partitioner and scheduler
may pick another collective, merge two, or split one in the next release; a lecture that asserts
their exact choice breaks then. ``within`` asserts the bounds every legal plan meets (which kinds
may appear, the least and the most values a device may send) and says the exact figure with the
JAX version and backend that produced it, so the number the text quotes is still printed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .hlo import Census


class OutsideBounds(AssertionError):
    """A compiled program did what no correct plan for it does."""


def within(
    census: Census,
    kinds: Iterable[str] | Mapping[str, Iterable[str]],
    least: float,
    most: float | None = None,
) -> str:
    """Hold ``census`` to a correct plan's bounds and say what this compiler chose.

    ``kinds``: the collectives a correct plan may use, or per set of mesh axes (as
    ``Census.by_axes`` names them) the ones it may use across them; ``least`` and ``most``
    (``least`` if not given): the values one device may send. Raises ``OutsideBounds`` naming
    what was chosen; returns one line, e.g. ``on JAX 0.10.2, XLA:CPU chose all-reduce x1: 224
    values per device (a correct plan sends 112 to 224)``."""
    import jax

    most = least if most is None else most
    sent = census.values_per_device
    chose = _chosen(census, kinds)
    line = (
        f"on JAX {jax.__version__}, XLA:{jax.default_backend().upper()} chose {chose}: {_num(sent)} values per device"
    )
    line += (
        f" (a correct plan sends {_num(least)})"
        if least == most
        else f" (a correct plan sends {_num(least)} to {_num(most)})"
    )
    if sent is None or not least <= sent <= most:
        raise OutsideBounds(f"{line}: outside the bounds")
    return line


def _chosen(census: Census, kinds: Iterable[str] | Mapping[str, Iterable[str]]) -> str:
    """The collectives chosen, in words, once each is held to the kinds allowed where it runs."""
    if isinstance(kinds, Mapping):
        if census.counts and not census.by_axes:
            raise ValueError(
                "kinds per mesh axis need a census read with them: hlo_census(text, mesh_shape, axis_names)"
            )
        allowed = {axes: set(names) for axes, names in kinds.items()}
        for axes, counts in census.by_axes.items():
            if not set(counts) <= allowed.get(axes, set()):
                raise OutsideBounds(f"over {axes!r} it chose {dict(counts)}; a correct plan uses {allowed.get(axes)}")
        return "; ".join(f"{_counted(counts)} over {axes!r}" for axes, counts in sorted(census.by_axes.items()))
    if not set(census.counts) <= set(kinds):
        raise OutsideBounds(f"it chose {dict(census.counts)}; a correct plan uses only {sorted(kinds)}")
    return _counted(census.counts) or "no collective"


def _counted(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{kind} x{n}" for kind, n in sorted(counts.items()))


def _num(value: float | None) -> str:
    return "unbounded" if value is None else f"{value:g}"
