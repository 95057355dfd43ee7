"""Independent stand-ins for lecture_10_pipeline_and_experts's references, written another way
(the schedule played out step by step, or on JAX's own all_gather): tests/specs/test_oracles.py
holds the references to them. Test code only: never shipped."""

from __future__ import annotations

from typing import Any


def _pipeline_idle_share_oracle(stages: int, microbatches: int) -> float:
    # Play GPipe's forward schedule: at each step stage s works on micro-batch step - s; count the
    # steps, until the last stage has seen every micro-batch, in which stage 0 has nothing to do.
    step = idle = 0
    while step - (stages - 1) < microbatches:
        idle += not 0 <= step < microbatches
        step += 1
    return idle / step


def _pipeline_shift_oracle(x: Any, axis_name: str) -> Any:
    import jax

    # Gather every stage's activation and take the predecessor's; zeros on the first stage.
    me = jax.lax.axis_index(axis_name)
    previous = jax.lax.all_gather(x, axis_name)[jax.numpy.maximum(me - 1, 0)]
    return jax.numpy.where(me == 0, jax.numpy.zeros_like(x), previous)


ORACLES = {
    "pipeline_idle_share": _pipeline_idle_share_oracle,
    "pipeline_shift": _pipeline_shift_oracle,
}
