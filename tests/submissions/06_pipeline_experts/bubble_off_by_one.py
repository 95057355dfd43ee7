"""The bubble counted over M + S steps instead of the schedule's M + S - 1: (S - 1) / (M + S),
wrong on every visible and hidden case."""

EXPECTED = {
    "bubble_fraction: values": 0,
    "bubble_fraction: hidden values": 0,
}
REASONS = {
    "bubble_fraction: values": "(4, 8)",
    "bubble_fraction: hidden values": "returned",
}


def bubble_fraction(stages, microbatches):
    return (stages - 1) / (microbatches + stages)
