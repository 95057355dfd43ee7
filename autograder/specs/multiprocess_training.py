"""Assignment 03_multiprocess_training: data-parallel Flax training across processes.

What the students are given (model, optimizer, data, mesh) lives in
``given/multiprocess_training.py``; this module holds the task spec. The references and the
hidden layout stay with the instructor, in ``solutions/multiprocess_training.py``.
"""

from __future__ import annotations

from ..core.tasks import Assignment, Case, Task, Training
from .given.multiprocess_training import (
    NUM_DEVICES,
    data_mesh,
    hold_batches,
    init_state,
    local_batch,
    random_batch,
)

NUM_STEPS = 6
LAYOUT_TIMEOUT = 40.0  # seconds for one layout's processes to start, train and finish


def layout(processes: int, devices: int) -> Case:
    """A layout of the same 8-device mesh: ``processes`` x ``devices`` each. Its seed, and how
    many batches each process's data holds, are drawn for the run (``harness/layouts.py``)."""
    run = (("num_steps", NUM_STEPS), ("timeout", LAYOUT_TIMEOUT))
    return Case(mesh=f"{NUM_DEVICES}:data", args=(processes, devices), kwargs=run)


VISIBLE_LAYOUTS = (layout(1, 8), layout(2, 4))  # the notebook's self-checks run these two
LAYOUT_PARTS = ("1 process x 8 devices", "2 processes x 4 devices", "4 processes x 2 devices")


# Hidden units that never fire: no dropout mask can matter, only the output bias learns.
TRAINING = Training(
    data_mesh=data_mesh,
    local_batch=local_batch,
    init_state=init_state,
    random_batch=random_batch,
    hold_batches=hold_batches,
    batch_axis="data",
    quiet={"params/hidden/bias/value": -100.0},
)


def _layout_points(points: tuple[float, float, float]) -> dict[str, float]:
    return dict(zip(LAYOUT_PARTS, points))


ASSIGNMENT = Assignment(
    name="03_multiprocess_training",
    notebook="03_multiprocess_training.ipynb",
    solutions="multiprocess_training",
    tasks=(
        Task(
            name="make_global_batch",
            grade_id="test_make_global_batch",
            kind="training",
            points=_layout_points((2.0, 4.0, 4.0)),
            cases=VISIBLE_LAYOUTS,
            training=TRAINING,
        ),
        Task(
            name="train_step",
            grade_id="test_train_step",
            kind="train_step",
            points={"values": 6.0, "collectives": 4.0, "dropout": 5.0},
            cases=(Case(mesh=f"{NUM_DEVICES}:data"),),
            training=TRAINING,
        ),
        Task(
            name="train",
            grade_id="test_train",
            kind="training",
            points=_layout_points((5.0, 10.0, 10.0)),
            cases=VISIBLE_LAYOUTS,
            training=TRAINING,
        ),
    ),
)
