"""The find-the-bug pipeline handed in as it was given: every stage after the first starts one step
after stage 0 instead of s steps, and the loop stops after M + 1 steps. Right on two stages, where
both are true; wrong on every case of 4 and 8, so nothing else is judged."""

EXPECTED = {
    "fixed_pipeline: values": 0,
    "fixed_pipeline: hidden values": 0,
    "fixed_pipeline: technique": 0,
    "fixed_pipeline: communication": 0,
}
REASONS = {
    "fixed_pipeline: values": "wrong values on 4 of 4 devices",
    "fixed_pipeline: hidden values": "wrong values",
    "fixed_pipeline: technique": "not checked until the values are right on at least one case",
    "fixed_pipeline: communication": "not checked until the values are right",
}


def fixed_pipeline(weights, x, axis_name):
    return broken_pipeline(weights, x, axis_name)
