"""The kinds of graded task, by name. Each side keeps one registry keyed by these names
(``harness/calls.py``: how a kind is called and exported; ``trusted/judges.py``: how its
reference is stored, its result measured and scored), and a test checks that both cover exactly
this list: a new kind is a module on each side and one line in each registry."""

from __future__ import annotations

from typing import Literal, get_args

Kind = Literal["shard_map", "python", "training", "train_step", "sharded_step"]
KINDS: tuple[Kind, ...] = get_args(Kind)
