"""GPipe's bubble, (S - 1) / (M + S - 1), the formula lecture 10 prints, whatever the chunks: right
only where there is one chunk per device, so it loses every case with more."""

EXPECTED = {
    "bubble_fraction: values": 0,
    "bubble_fraction: hidden values": 0,
}
REASONS = {
    "bubble_fraction: values": "(4, 8, 2)",
    "bubble_fraction: hidden values": "returned",
}


def bubble_fraction(stages, microbatches, chunks):
    return (stages - 1) / (microbatches + stages - 1)
