"""Process 1 runs one step fewer than the others, as when its share of the data runs out first:
the others wait for it in the last step's all-reduce until the layout's time limit."""

EXPECTED = {
    "train: 2 processes x 4 devices": 0,
    "train: 4 processes x 2 devices": 0,
}
REASONS = {
    "train: 2 processes x 4 devices": "process 1 began step 5 of 6",
    "train: 4 processes x 2 devices": "process 1 began step 5 of 6",
}
HANG = "process 1 began step 5 of 6"


def train(num_steps, seed):
    mesh = data_mesh()
    step = jax.jit(train_step)
    losses = []
    with jax.set_mesh(mesh):
        state = jax.device_put(init_state(seed), jax.NamedSharding(mesh, jax.P()))
        for i in range(num_steps - (jax.process_index() == 1)):
            batch = make_global_batch(local_batch(i, seed), mesh)
            state, loss = step(state, batch, jax.random.fold_in(jax.random.key(seed), i))
            losses.append(loss)
    return state["params"], losses
