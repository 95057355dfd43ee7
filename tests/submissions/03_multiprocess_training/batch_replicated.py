"""The global batch built as if replicated (P()): each process claims its own rows are the whole
batch. Its shape and sharding are wrong in every layout, and train_step's shard_map, which asks
for rows split over 'data', refuses it: training fails in every layout, with JAX's reason."""

EXPECTED = {
    "make_global_batch: 1 process x 8 devices": 0,
    "make_global_batch: 2 processes x 4 devices": 0,
    "make_global_batch: 4 processes x 2 devices": 0,
    "train: 1 process x 8 devices": 0,
    "train: 2 processes x 4 devices": 0,
    "train: 4 processes x 2 devices": 0,
}
REASONS = {
    "make_global_batch: 1 process x 8 devices": "'x' is sharded P(), the task asks for P('data')",
    "make_global_batch: 2 processes x 4 devices": "'x' is float32[16, 16], expected float32[32, 16] (the global batch)",
    "make_global_batch: 4 processes x 2 devices": "'x' is float32[8, 16], expected float32[32, 16] (the global batch)",
    "train: 1 process x 8 devices": "in_specs passed to shard_map: P('data', None) does not match the specs of the input: P(None, None)",
    "train: 2 processes x 4 devices": "in_specs passed to shard_map: P('data', None) does not match the specs of the input: P(None, None)",
    "train: 4 processes x 2 devices": "in_specs passed to shard_map: P('data', None) does not match the specs of the input: P(None, None)",
}


def make_global_batch(local_batch, mesh):
    everywhere = jax.NamedSharding(mesh, jax.P())
    return jax.tree.map(lambda rows: jax.make_array_from_process_local_data(everywhere, rows), local_batch)
