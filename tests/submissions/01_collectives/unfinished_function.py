"""ring_reduce_scatter left as the release's stub; ring_all_reduce, which calls it, fails too."""

EXPECTED = {
    "ring_reduce_scatter: values": 0,
    "ring_reduce_scatter: hidden values": 0,
    "ring_reduce_scatter: collectives": 0,
    "ring_reduce_scatter: communication": 0,
    "ring_all_reduce: values": 0,
    "ring_all_reduce: hidden values": 0,
    "ring_all_reduce: collectives": 0,
    "ring_all_reduce: communication": 0,
}


def ring_reduce_scatter(x, axis_name):
    # YOUR CODE HERE
    raise NotImplementedError()
