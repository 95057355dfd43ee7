"""The layernorm returns half its columns and fold_rng_over_axis returns raw key data instead of
a key: the artifacts are refused for their output types, and those functions score nothing."""

EXPECTED = {
    "sharded_layernorm: values": 0,
    "sharded_layernorm: hidden values": 0,
    "sharded_layernorm: technique": 0,
    "sharded_layernorm: communication": 0,
    "fold_rng_over_axis: values": 0,
    "fold_rng_over_axis: hidden values": 0,
    "fold_rng_over_axis: technique": 0,
}
MESSAGE_OF = {
    "sharded_layernorm: values": r"output shape is \(1, 4, 4\) per device, expected \(1, 4, 8\)",
    "sharded_layernorm: hidden values": r"output shape is \(1, 2, 8\) per device, expected \(1, 2, 16\)",
    "sharded_layernorm: technique": "not checked until the values are right on at least one case",
    "sharded_layernorm: communication": "not checked until the values are right on at least one case",
    "fold_rng_over_axis: values": "output dtype is uint32, expected key",
    "fold_rng_over_axis: hidden values": "output dtype is uint32, expected key",
    "fold_rng_over_axis: technique": "not checked until the values are right on at least one case",
}


def sharded_layernorm(x, axis_name, eps=1e-5):
    return x[:, : x.shape[1] // 2]


def fold_rng_over_axis(key, axis_name):
    return jax.random.key_data(jax.random.fold_in(key, jax.lax.axis_index(axis_name)))
