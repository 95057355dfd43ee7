"""Assignment 07_inference: serving a model one token at a time. A cost model of the key/value cache
and of a decode step on N chips, a tensor-parallel decode step in ``shard_map`` over ``model`` with
grouped-query attention and the cache updated in place, decoding from a cache split over the
sequence, a serving plan from the cost model, and a decode step whose cache update moves the whole
cache.

What the students are given (the layer, the layouts, the models and machines, the broken step)
lives in ``given/inference.py``. What the steps send and the cost model's answers are the
instructor's: they live in ``solutions/inference.py``.
"""

from __future__ import annotations

from ..core.tasks import Assignment, Bound, Bounds, Case, Scale, Step, Task
from .given.inference import (
    DECODE_PATHS,
    H200,
    LLAMA_70B,
    MISTRAL_7B,
    REPLICA_INPUTS,
    SPLIT_INPUTS,
    TP_INPUTS,
    decode_cases,
    replica_cases,
    split_cases,
)

# The decode steps are float32 on every case: the cache's values are compared leaf by leaf, and
# the output is a sum of two all-reduced partial products (order-dependent at about 1e-6).
STEP_TOLERANCE = {"float32": (1e-4, 1e-4)}
# Split decoding's statistics are float32 whatever the cache's dtype, and its output is rounded
# once to the cache's dtype: on the bfloat16 hidden case, over 18 seeds, the reference's own error
# against float32 uses 8% of rtol 2e-2 beside atol 2e-2 (4x of it needs no atol at all), and a sum
# in another order moves it by 6e-6 of it (benchmarks/bf16_tolerances.py's figures, held by
# tests/trusted/test_tolerances.py).
SPLIT_TOLERANCE = {"float32": (1e-4, 1e-4), "bfloat16": (2e-2, 2e-2)}

# A decode step reads every weight and its share of the cache once per token; what it must never
# do is move or copy the cache. On these cases the cache outweighs a device's weights: a step that
# keeps the old cache beside the new one (no donation) needs 1.5x and more of the reference's
# memory at its peak, one that gathers it over `model` far more, and one that returns it whole on
# every device holds N times the reference's. One all-reduce of the (B, D) activations per block
# (attention, MLP): doubling them is twice the bytes.
TP_HELD = "each device keeps its own key/value heads of the cache, updated in place, and nothing more"
TP_SENT = "a tensor-parallel layer all-reduces the (batch, d_model) activations once per block, attention and MLP"
TP_BOUNDS = {
    "technique": Bounds(
        resident=Bound(1.5, TP_HELD),
        peak=Bound(
            1.4,
            "write the new keys and values into the donated cache (donate_argnums), never a second copy of it",
        ),
        flops=Bound(1.5, "each device projects and attends with its own heads, and runs its own MLP features"),
        traffic=Bound(1.5, TP_SENT),
    ),
    "communication": Bounds(traffic=Bound(1.0, TP_SENT)),
}

# Split decoding sends each query's statistics (its maximum, its sum of exponentials and its
# weighted sum of values: K + 2 values) and nothing that grows with the sequence: gathering the
# cache sends (N - 1)/N of it, tens of times the statistics on these cases, and holds all of it.
SPLIT_SENT = "the partial maxima, sums and weighted values of each query, whatever the cache's length"
SPLIT_BOUNDS = {
    "technique": Bounds(
        peak=Bound(1.5, "each device reads its own block of positions of the cache, never the others'"),
        flops=Bound(1.5, "each device scores each query against its own positions only"),
        traffic=Bound(1.5, SPLIT_SENT),
    ),
    "communication": Bounds(traffic=Bound(1.0, SPLIT_SENT)),
}

# Replicas send nothing: each device serves its own sequences from its own cache. A cache update
# that gathers the batch's caches sends and holds N times a device's share; one that copies it
# (no donation) holds the old cache beside the new one.
REPLICA_HELD = "each device keeps its own sequences' caches, updated in place"
REPLICA_BOUNDS = {
    "technique": Bounds(
        resident=Bound(1.5, REPLICA_HELD),
        peak=Bound(1.4, "write the new token into the donated cache (donate_argnums): never a copy of the cache"),
        flops=Bound(1.5, "each device serves its own sequences only"),
        traffic=Bound(1.0, "replicas serve their own sequences: nothing needs to be sent"),
    ),
}

# A 7B-class layer (Mistral 7B's shape: width 4096, 32 query heads of 128 over 8 key/value
# heads, an MLP of 14336) in bfloat16, 8 sequences of a 32k context.
TP_SCALE = Scale(
    decode_cases((("8:model", 8, 4096, 32, 8, 128, 14336, 32768),))[0],
    "a layer of a 7B-class model (grouped-query attention, 32 query heads over 8 key/value heads) decoding "
    "8 sequences of a 32k context over 8 chips: one key/value head a chip",
)
SPLIT_SCALE = Scale(
    split_cases((("8:i", "i", 8, 32, 8, 128, 32768, "bfloat16"),))[0],
    "a 7B-class layer's attention (32 query heads over 8 key/value heads) decoding 8 sequences of a 32k context, "
    "4096 positions a chip",
)
REPLICA_SCALE = Scale(
    replica_cases((("8:data", 64, 4096, 32, 8, 128, 14336, 32768),))[0],
    "a layer of a 7B-class model served by 8 replicas, 8 sequences of a 32k context each",
)

COST_CASES = tuple(
    Case(args=args)
    for args in (
        (MISTRAL_7B, H200, 1, 4096, 1),
        (MISTRAL_7B, H200, 32, 8192, 4),
        (LLAMA_70B, H200, 8, 32768, 8),
    )
)

ASSIGNMENT = Assignment(
    name="07_inference",
    notebook="07_inference.ipynb",
    solutions="inference",
    tasks=(
        Task(
            name="cache_bytes",
            grade_id="test_cache_bytes",
            kind="python",
            # A plain-Python part's visible answers are in the student's hands: its hidden cases weigh more.
            points={"values": 1.0, "hidden values": 2.0},
            cases=tuple(
                Case(args=args) for args in ((MISTRAL_7B, 1, 4096), (MISTRAL_7B, 16, 32768), (LLAMA_70B, 8, 8192))
            ),
            hidden_vary="other models (head counts, widths, dtypes), batches and context lengths",
        ),
        Task(
            name="decode_time",
            grade_id="test_decode_time",
            kind="python",
            points={"values": 2.0, "hidden values": 4.0},
            cases=COST_CASES,
            hidden_vary="other models (head counts, dtypes), machines, batches, contexts and chip counts",
        ),
        Task(
            name="tp_decode_step",
            grade_id="test_tp_decode_step",
            kind="sharded_step",
            points={"values": 2.0, "hidden values": 2.0, "technique": 5.0, "communication": 3.0},
            bounds=TP_BOUNDS,
            cases=decode_cases((("4:model", 4, 16, 8, 4, 8, 32, 64), ("8:model", 2, 32, 16, 8, 4, 64, 128))),
            inputs=TP_INPUTS,
            tolerance=STEP_TOLERANCE,
            allowed=frozenset({"psum"}),
            step=Step(DECODE_PATHS, ("cache",)),
            at_scale=TP_SCALE,
        ),
        Task(
            name="split_cache_decode",
            grade_id="test_split_cache_decode",
            kind="shard_map",
            points={"values": 2.0, "hidden values": 2.0, "technique": 5.0, "communication": 3.0},
            bounds=SPLIT_BOUNDS,
            cases=split_cases(
                (
                    ("8:i", "i", 4, 8, 2, 8, 128, "float32"),
                    ("4:i", "i", 2, 4, 4, 16, 64, "float32"),
                    ("2x4:x,y", "y", 3, 6, 3, 8, 256, "float32"),
                )
            ),
            inputs=SPLIT_INPUTS,
            out_layout=SPLIT_INPUTS[0].layout,
            tolerance=SPLIT_TOLERANCE,
            # pmax, the statistics' maximum, is an all-reduce too: psum's kind in the compiled HLO.
            allowed=frozenset({"psum"}),
            steps_pictured=True,  # one max and two sums, drawn: a program that gathers the cache shows it
            at_scale=SPLIT_SCALE,
        ),
        Task(
            name="plan_serving",
            grade_id="test_plan_serving",
            kind="python",
            points={"values": 2.0, "hidden values": 4.0},
            cases=tuple(
                Case(args=args)
                for args in (
                    (MISTRAL_7B, H200, 8, 16, 4096, 0.005),
                    (LLAMA_70B, H200, 8, 32, 8192, 0.03),
                    (MISTRAL_7B, H200, 8, 64, 32768, 0.008),
                )
            ),
            hidden_vary="other models, machines, chip counts, batches, contexts and latency targets",
        ),
        Task(
            name="fixed_decode_step",
            grade_id="test_fixed_decode_step",
            kind="sharded_step",
            points={"values": 2.0, "hidden values": 2.0, "technique": 7.0},
            bounds=REPLICA_BOUNDS,
            cases=replica_cases((("8:data", 16, 16, 4, 2, 8, 32, 128), ("4:data", 8, 16, 8, 2, 4, 32, 64))),
            inputs=REPLICA_INPUTS,
            tolerance=STEP_TOLERANCE,
            allowed=frozenset(),
            step=Step(DECODE_PATHS, ("cache",)),
            at_scale=REPLICA_SCALE,
        ),
    ),
)
