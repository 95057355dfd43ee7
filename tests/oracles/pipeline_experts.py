"""Independent stand-ins for pipeline_experts' references, written another way (every layer run on
every device from gathered weights, the experts from gathered tokens, the bubble by counting idle
slots of the schedule): tests/specs/test_oracles.py holds the references to them. Test code only:
never shipped."""

from __future__ import annotations

from typing import Any

from autograder.specs.given.pipeline_experts import stage


def _pipeline_oracle(weights: Any, x: Any, axis_name: str) -> Any:
    """The whole model on every device: no schedule to get wrong."""
    import jax

    h = x
    for w in jax.lax.all_gather(weights[0], axis_name, to="invarying"):
        h = stage(h, w)
    return h


def _bubble_oracle(stages: int, microbatches: int, chunks: int) -> float:
    """The interleaved schedule played out step by step, its idle slots counted: each device takes
    its (round, micro-batch) items in order, each once the chunk before it has finished."""
    todo = [[(r, m) for r in range(chunks) for m in range(microbatches)] for _ in range(stages)]
    finished: dict[tuple[int, int, int], int] = {}
    step = 0
    while any(todo):
        for device in range(stages):
            if not todo[device]:
                continue
            r, m = todo[device][0]
            needs = (device - 1, r, m) if device else (stages - 1, r - 1, m) if r else None
            if needs is None or finished.get(needs, step) < step:
                finished[device, r, m] = step
                todo[device].pop(0)
        step += 1
    return 1 - chunks * microbatches / step


def _moe_oracle(x: Any, router: Any, experts: Any, axis_name: str, capacity: int) -> Any:
    """Every expert on every device, each token through its own, the capacity applied by ranking
    the tokens routed to each expert: no buffers, no all-to-all."""
    import jax
    import jax.numpy as jnp

    everyone = jax.lax.all_gather(experts[0], axis_name, to="invarying")  # (experts, d, d)
    probabilities = jax.nn.softmax(x @ router, axis=1)
    expert = jnp.argmax(probabilities, axis=1)
    same = expert[:, None] == expert[None, :]
    earlier = jnp.tril(jnp.ones(same.shape, bool), -1)
    rank = jnp.sum(same & earlier, axis=1)  # tokens before mine routed to my expert
    out = jnp.einsum("td,tde->te", x, everyone[expert])
    gate = jnp.take_along_axis(probabilities, expert[:, None], axis=1)
    return x + jnp.where((rank < capacity)[:, None], gate * out, 0.0)


ORACLES = {
    "gpipe": _pipeline_oracle,
    "bubble_fraction": _bubble_oracle,
    "moe_layer": _moe_oracle,
    "fixed_pipeline": _pipeline_oracle,
}
