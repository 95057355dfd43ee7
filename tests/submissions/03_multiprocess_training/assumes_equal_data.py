"""train runs num_steps steps in every process, as if every process's data held that many
batches. In a graded run some process's data holds fewer (each run draws the counts), so a process
asks for a batch its data does not hold and fails, in every layout; the message names the hazard."""

EXPECTED = {
    "train: 1 process x 8 devices": 0,
    "train: 2 processes x 4 devices": 0,
    "train: 4 processes x 2 devices": 0,
}
REASONS = {
    "train: 1 process x 8 devices": "every process must run the same number of steps, so agree on it before the loop (the last-batch hazard)",
    "train: 2 processes x 4 devices": "every process must run the same number of steps, so agree on it before the loop (the last-batch hazard)",
    "train: 4 processes x 2 devices": "the last-batch hazard",
}


def train(num_steps, seed):
    mesh = data_mesh()
    step = jax.jit(train_step)
    losses = []
    with jax.set_mesh(mesh):
        state = jax.device_put(init_state(seed), jax.NamedSharding(mesh, jax.P()))
        for i in range(num_steps):
            batch = make_global_batch(local_batch(i, seed), mesh)
            state, loss = step(state, batch, jax.random.fold_in(jax.random.key(seed), i))
            losses.append(loss)
    return state["params"], losses
