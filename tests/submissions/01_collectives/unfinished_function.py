"""ring_reduce_scatter left as the release's stub, which raises NotImplementedError; ring_all_reduce,
which calls it, fails too, and their structure checks wait for right values."""

EXPECTED = {
    "ring_reduce_scatter: values": 0,
    "ring_reduce_scatter: hidden values": 0,
    "ring_reduce_scatter: technique": 0,
    "ring_reduce_scatter: communication": 0,
    "ring_all_reduce: values": 0,
    "ring_all_reduce: hidden values": 0,
    "ring_all_reduce: technique": 0,
    "ring_all_reduce: communication": 0,
}
REASONS = {
    "ring_reduce_scatter: values": "ring_reduce_scatter raised NotImplementedError",
    "ring_reduce_scatter: hidden values": "ring_reduce_scatter raised NotImplementedError",
    "ring_reduce_scatter: technique": "not checked until the values are right on at least one case",
    "ring_reduce_scatter: communication": "not checked until the values are right on at least one case",
    "ring_all_reduce: values": "ring_all_reduce raised NotImplementedError",
    "ring_all_reduce: hidden values": "ring_all_reduce raised NotImplementedError",
    "ring_all_reduce: technique": "not checked until the values are right on at least one case",
    "ring_all_reduce: communication": "not checked until the values are right on at least one case",
}


def ring_reduce_scatter(x, axis_name):
    # YOUR CODE HERE
    raise NotImplementedError()
