"""An honest variant: the interleaved schedule played out step by step in Python and its idle
steps counted, no closed form. It keeps every point."""

HONEST = True
EXPECTED = {}
REASONS = {}


def bubble_fraction(stages, microbatches, chunks):
    finished = {}  # (device, round, micro-batch) -> the step it ran at
    queues = [[(r, m) for r in range(chunks) for m in range(microbatches)] for _ in range(stages)]
    step = 0
    while any(queues):
        for device, queue in enumerate(queues):
            if not queue:
                continue
            r, m = queue[0]
            before = (device - 1, r, m) if device else (stages - 1, r - 1, m)
            if (device == 0 and r == 0) or finished.get(before, step) < step:
                finished[(device, r, m)] = step
                queue.pop(0)
        step += 1
    return 1 - chunks * microbatches / step
