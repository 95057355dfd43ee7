"""The lane pool's bookkeeping, in-process: lanes that stand for containers, started and removed
by functions the test holds, so that a start can be held mid-way."""

import threading

from autograder.grading.sandbox.lanes import LanePool

WAIT = 10.0  # seconds any step here may take; each takes milliseconds


class FakeLane:
    """What the pool asks of a lane: whether its server is gone, and whether it clears."""

    def __init__(self, name):
        self.name, self.gone, self.clears = name, False, True

    def clear(self):
        return self.clears


class Engine:
    """Starts lanes, each once ``go`` is set, and records which it removed."""

    def __init__(self, fails=False):
        self.go, self.fails = threading.Event(), fails
        self.started, self.removed = [], []

    def start(self):
        assert self.go.wait(WAIT), "the test never let the start finish"
        if self.fails:
            raise OSError("the engine refused the container")
        lane = FakeLane(f"lane{len(self.started)}")
        self.started.append(lane)
        return lane

    def discard(self, lane):
        self.removed.append(lane)


def _closing(pool):
    closing = threading.Thread(target=pool.close)
    closing.start()
    return closing


def _taken(pool):
    """The first lane ``take`` hands out, once one has started."""
    for _ in range(int(WAIT / 0.01)):
        if (lane := pool.take()) is not None:
            return lane
        threading.Event().wait(0.01)
    raise AssertionError(f"no lane free within {WAIT:g} s")


def test_close_waits_for_a_lane_still_starting_and_removes_it():
    """A grading process exits once its sandbox is closed: a lane that was starting then must be
    gone by the time ``close`` returns, not removed later by a thread the exit kills."""
    engine = Engine()
    pool = LanePool(1, engine.start, engine.discard)
    closing = _closing(pool)
    closing.join(0.3)
    assert closing.is_alive(), "close returned while a lane was still starting"
    engine.go.set()
    closing.join(WAIT)
    assert not closing.is_alive()
    assert engine.removed == engine.started and len(engine.started) == 1
    assert pool.take() is None


def test_close_does_not_wait_on_a_start_the_engine_refused():
    engine = Engine(fails=True)
    engine.go.set()
    pool = LanePool(2, engine.start, engine.discard)
    closing = _closing(pool)
    closing.join(WAIT)
    assert not closing.is_alive() and engine.started == engine.removed == []


def test_a_lane_that_will_not_clear_is_replaced_and_one_handed_out_at_close_is_removed_on_return():
    engine = Engine()
    engine.go.set()
    pool = LanePool(1, engine.start, engine.discard)
    first = _taken(pool)
    assert pool.take() is None, "one lane, and it is out"
    pool.give_back(first)
    assert pool.take() is first, "a lane that clears serves the next submission"
    first.clears = False
    pool.give_back(first)
    replacement = _taken(pool)
    assert engine.removed == [first] and replacement.name == "lane1"
    pool.close()
    assert engine.removed == [first], "the lane handed out is its submission's until it comes back"
    pool.give_back(replacement)
    assert engine.removed == [first, replacement]
