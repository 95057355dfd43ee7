"""The interleaved schedule counted one step too long: each round's wait right, the last round's
M + S - 1 steps taken as M + S. Wrong on every visible and hidden case."""

EXPECTED = {
    "bubble_fraction: values": 0,
    "bubble_fraction: hidden values": 0,
}
REASONS = {
    "bubble_fraction: values": "(4, 8, 2)",
    "bubble_fraction: hidden values": "returned",
}


def bubble_fraction(stages, microbatches, chunks):
    steps = (chunks - 1) * max(microbatches, stages) + microbatches + stages
    return (steps - chunks * microbatches) / steps
