"""ring_all_gather loops forever while being traced: that task times out, the rest are graded."""

EXPECTED = {
    "ring_all_gather: values": 0,
    "ring_all_gather: hidden values": 0,
    "ring_all_gather: collectives": 0,
    "ring_all_gather: communication": 0,
    "ring_all_reduce: values": 0,
    "ring_all_reduce: hidden values": 0,
    "ring_all_reduce: collectives": 0,
    "ring_all_reduce: communication": 0,
}


def ring_all_gather(x, axis_name):
    while True:
        pass
