"""Self-check exercises for lecture 11_serving (never graded).

``decode_intensity``: the FLOPs per byte of one layer's decode step in bfloat16, at a batch and a
cache length (the weights read once for the batch, every sequence's cache once).
``two_chunk_attention``: one head's attention on one device, computed from two chunks of the
positions, each reduced to its maximum, sum of exponentials and weighted sum of values, then
combined; no collective (the sequence split over devices is the assignment's).
"""

from __future__ import annotations

from ..core.tasks import REPLICATED, Assignment, Case, Input, Task

EXERCISES = Assignment(
    name="lecture 11_serving",
    notebook="11_serving.ipynb",
    solutions="lecture_11_serving",
    tasks=(
        Task(
            name="decode_intensity",
            grade_id="lecture_decode_intensity",
            kind="python",
            points={"values": 1.0},
            cases=tuple(
                Case(args=args)
                for args in (
                    (1, 218103808, 4096, 8, 128, 2048),  # lecture 11's 7B-class layer, one sequence
                    (64, 218103808, 4096, 8, 128, 2048),
                    (256, 218103808, 4096, 32, 128, 4096),  # multi-head attention's cache
                    (8, 3145728, 512, 8, 64, 1024),  # the lecture's small layer
                    (16, 1000, 64, 4, 16, 0),  # no cache: the intensity is the batch
                )
            ),
        ),
        Task(
            name="two_chunk_attention",
            grade_id="lecture_two_chunk_attention",
            kind="shard_map",
            points={"values": 1.0},
            # One device, no axis: the function is called on the whole arrays.
            cases=(
                Case("1:i", None, ((3, 8), (16, 8), (16, 8)), "float32"),
                Case("1:i", None, ((1, 4), (6, 4), (6, 4)), "float32"),
                Case("1:i", None, ((5, 16), (2, 16), (2, 16)), "float32"),
            ),
            inputs=(Input(REPLICATED),) * 3,  # q (queries, width), k and v (positions, width)
            out_layout=REPLICATED,
            tolerance={"float32": (1e-5, 1e-5)},
            allowed=frozenset(),
        ),
    ),
)
