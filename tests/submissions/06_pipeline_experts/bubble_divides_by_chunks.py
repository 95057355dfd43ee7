"""GPipe's bubble share divided by the chunks, a misreading of "interleaving shrinks the bubble by
a factor v": the fill and drain shrink by v in time, but the share of the schedule does not."""

EXPECTED = {
    "bubble_fraction: values": 0,
    "bubble_fraction: hidden values": 0,
}
REASONS = {
    "bubble_fraction: values": "(4, 8, 2)",
    "bubble_fraction: hidden values": "returned",
}


def bubble_fraction(stages, microbatches, chunks):
    return (stages - 1) / (microbatches + stages - 1) / chunks
