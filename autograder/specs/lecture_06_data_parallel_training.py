"""Self-check exercises for lecture 06_data_parallel_training (never graded).

``data_parallel_gradient``: the gradient of a loss over the whole (sharded) batch with respect to
replicated weights, the same on every device, by averaging gradients rather than gathering data.
``accumulated_gradient``: the same gradient, each device adding up the gradients of ``micro``
equal micro-batches of its rows in turn and communicating once, after the loop. Accumulation changes how
the gradient is computed, not what it is.

One all-reduce after the loop, rather than one per micro-batch, is held by the communication
point, not by a count of collectives. XLA:CPU's all-reduce combiner merges a Python loop's
``micro`` pmeans into one all-reduce of a tuple of ``micro`` gradients, which the census counts
once, so an exact count (``collective_counts={"psum": 1}``) would pass that answer and fail only
its fori_loop form (an all-reduce in a while loop, counted ``micro`` times). Both forms send
``micro`` times the bound, one all-reduce of a gradient the size of w, so both lose the
communication point and keep the collectives point. Every case has micro > 1, so that they differ.
"""

from __future__ import annotations

from ..core.tasks import REPLICATED, Assignment, Case, Input, Layout, Task, least_traffic

BATCH_SPLIT = Layout(("AXIS", None))  # (batch, features): examples over the case's axis


def _gradient_task(name: str, cases: tuple[Case, ...]) -> Task:
    """A gradient of replicated weights over a batch split by rows: right values, all-reduces
    only, and no more traffic than one all-reduce of a gradient the size of the weights."""
    return Task(
        name=name,
        grade_id=f"lecture_{name}",
        kind="shard_map",
        points={"values": 1.0, "technique": 1.0, "communication": 1.0},
        bounds=least_traffic("data parallelism all-reduces the gradient once, after every micro-batch is summed"),
        cases=cases,
        inputs=(Input(REPLICATED), Input(BATCH_SPLIT), Input(BATCH_SPLIT)),
        out_layout=REPLICATED,
        tolerance={"float32": (1e-5, 1e-5)},
        allowed=frozenset({"psum"}),
    )


EXERCISES = Assignment(
    name="lecture 06_data_parallel_training",
    notebook="06_data_parallel_training.ipynb",
    solutions="lecture_06_data_parallel_training",
    tasks=(
        _gradient_task(
            "data_parallel_gradient",
            (
                Case("8:i", "i", ((5, 3), (4, 5), (4, 3)), "float32"),
                Case("2x4:x,y", "y", ((6, 2), (3, 6), (3, 2)), "float32"),
            ),
        ),
        _gradient_task(
            "accumulated_gradient",
            (
                Case("8:i", "i", ((5, 3), (8, 5), (8, 3)), "float32", kwargs=(("micro", 4),)),
                Case("2x4:x,y", "y", ((6, 2), (6, 6), (6, 2)), "float32", kwargs=(("micro", 3),)),
            ),
        ),
    ),
)
