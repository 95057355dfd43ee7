"""Public: ``hlo_census(compiled.as_text())`` counts the collectives a compiled program runs and
the values each device sends; ``within(census, kinds, least, most)`` holds what a compiler chose
to the bounds any correct plan meets and says the exact figure beside its JAX version."""

from .core.hlo import Census, hlo_census
from .core.lowering_bounds import OutsideBounds, within

__all__ = ["Census", "OutsideBounds", "hlo_census", "within"]
