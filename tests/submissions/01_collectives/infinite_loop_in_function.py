"""ring_all_gather loops forever while being traced: each of its cases is stopped at the test time
limit, and so is ring_all_reduce, which calls it; their structure checks wait for right values.
The rest are graded as usual."""

EXPECTED = {
    "ring_all_gather: values": 0,
    "ring_all_gather: hidden values": 0,
    "ring_all_gather: technique": 0,
    "ring_all_gather: communication": 0,
    "ring_all_reduce: values": 0,
    "ring_all_reduce: hidden values": 0,
    "ring_all_reduce: technique": 0,
    "ring_all_reduce: communication": 0,
}
REASONS = {
    "ring_all_gather: values": "ring_all_gather took longer than 4 s",
    "ring_all_gather: hidden values": "ring_all_gather took longer than 4 s",
    "ring_all_gather: technique": "not checked until the values are right on at least one case",
    "ring_all_gather: communication": "not checked until the values are right on at least one case",
    "ring_all_reduce: values": "ring_all_reduce took longer than 4 s",
    "ring_all_reduce: hidden values": "ring_all_reduce took longer than 4 s",
    "ring_all_reduce: technique": "not checked until the values are right on at least one case",
    "ring_all_reduce: communication": "not checked until the values are right on at least one case",
}


def ring_all_gather(x, axis_name):
    while True:
        pass
