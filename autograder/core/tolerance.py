"""How far a graded value may be from the reference's.

A value passes where ``|got - want| <= atol + rtol |want| + of_largest max|want|``. The last term
is for parts whose outputs are sums of many large products: bfloat16's rounding step grows with
the values summed, and a small entry that is the difference of two large sums carries their
rounding, so its room scales with the case's largest value (an MLP's gradients reach thousands
where its forward pass reaches tens). It is taken from the reference's values, never the
student's, so no returned value widens its own tolerance.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Tolerance(NamedTuple):
    rtol: float
    atol: float
    of_largest: float = 0.0  # a share of the reference's largest |value| in the case, added to atol

    def atol_for(self, want: np.ndarray) -> float:
        """The absolute room on a case whose whole expected array is ``want``."""
        if not self.of_largest or not want.size:
            return self.atol
        return self.atol + self.of_largest * float(np.nanmax(np.abs(want.astype(np.float64)), initial=0.0))

    def show(self, want: np.ndarray) -> str:
        """As a failure states it: the figures, and the room the largest value gives."""
        shown = f"rtol={self.rtol:g}, atol={self.atol:g}"
        if self.of_largest:
            shown += f" + {self.of_largest:g} of the largest |value| = {self.atol_for(want):.3g}"
        return shown
