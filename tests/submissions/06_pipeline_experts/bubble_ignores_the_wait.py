"""The interleaved bubble as (S - 1) / (v M + S - 1), right while device 0 is still busy when the
first micro-batch comes back (M >= S), wrong when it must wait for it (M < S): the visible
(4, 2, 3) and hidden cases with fewer micro-batches than stages."""

EXPECTED = {
    "bubble_fraction: values": 0,
    "bubble_fraction: hidden values": 0,
}
REASONS = {
    "bubble_fraction: values": "(4, 2, 3)",
    "bubble_fraction: hidden values": "returned",
}


def bubble_fraction(stages, microbatches, chunks):
    return (stages - 1) / (chunks * microbatches + stages - 1)
