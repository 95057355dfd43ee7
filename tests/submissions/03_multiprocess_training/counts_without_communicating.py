"""train agrees on the number of steps without asking the other processes: it reckons every
process's count from the rule the notebook's demonstration shows (the odd-numbered processes hold
two batches fewer), which is shared Python, not the data. In a graded run each process's data holds
a count drawn for that run and only that process is told it, so the reckoning is wrong in every
layout: a process asks for a batch its data does not hold."""

EXPECTED = {
    "train: 1 process x 8 devices": 0,
    "train: 2 processes x 4 devices": 0,
    "train: 4 processes x 2 devices": 0,
}
REASONS = {
    "train: 1 process x 8 devices": "the last-batch hazard",
    "train: 2 processes x 4 devices": "the last-batch hazard",
    "train: 4 processes x 2 devices": "the last-batch hazard",
}


def train(num_steps, seed):
    mesh = data_mesh()
    step = jax.jit(train_step)
    processes = jax.process_count()
    held = [7 - 2 * (rank % 2) if processes > 1 else 7 for rank in range(processes)]  # no communication
    losses = []
    with jax.set_mesh(mesh):
        state = jax.device_put(init_state(seed), jax.NamedSharding(mesh, jax.P()))
        for i in range(min(num_steps, *held)):
            batch = make_global_batch(local_batch(i, seed), mesh)
            state, loss = step(state, batch, jax.random.fold_in(jax.random.key(seed), i))
            losses.append(loss)
    return state["params"], losses
