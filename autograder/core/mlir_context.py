"""Fewer MLIR contexts in a grading process: JAX makes a new one for every lowering, every export
and every read of an exported module, loading all its dialects each time (about 4 ms on this
machine, and as long again to tear down). A submission's runner and its trusted job make some
140 of them, a tenth of what the two processes spend; ``share_per_thread`` has each thread use
one for ``USES`` lowerings in a row instead.

A context keeps what its modules interned (types, attributes, constants) until it goes, so one
is replaced after ``USES`` lowerings: a notebook that lowers many programs with large constants
holds at most that many programs' worth more than JAX alone would. A module keeps its own
context alive for as long as it lives, so replacing one never touches a module still in use.

JAX's lowering is its own business: where its ``make_ir_context`` is not found (a JAX that moved
on), nothing is changed and each lowering makes its own context, as before.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

USES = 16  # lowerings one context serves before a new one is made


def share_per_thread(uses: int = USES) -> bool:
    """Replace JAX's ``make_ir_context`` with one that hands each thread the same context for
    ``uses`` calls in a row; False (and nothing changed) where this JAX has none to replace.
    Call it in the process that lowers, before it lowers; never before a fork (a context's
    thread pool does not survive one)."""
    try:
        from jax._src.interpreters import mlir
    except ImportError:
        return False
    make = getattr(mlir, "make_ir_context", None)
    if make is None:
        log.info("jaxcourse: this JAX has no make_ir_context; each lowering makes its own MLIR context")
        return False
    if isinstance(make, _Shared):
        return True
    mlir.make_ir_context = _Shared(make, uses)
    return True


class _Shared:
    """``make`` called once per ``uses`` calls on each thread; the same context in between."""

    def __init__(self, make: Callable[[], Any], uses: int) -> None:
        self.make = make
        self.uses = uses
        self.local = threading.local()

    def __call__(self) -> Any:
        local = self.local
        if getattr(local, "left", 0) <= 0:
            local.context, local.left = self.make(), self.uses
        local.left -= 1
        return local.context
