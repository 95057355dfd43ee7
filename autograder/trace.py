"""Public: ``hlo_census(compiled.as_text())`` counts the collectives a compiled program runs and
the values each device sends."""

from .core.hlo import Census, hlo_census

__all__ = ["Census", "hlo_census"]
