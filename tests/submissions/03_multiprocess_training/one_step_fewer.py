"""Each process loops over its own data, as if it were everyone's: in the graded run with two
processes, process 1's data holds fewer batches (4) than process 0's, so process 1 leaves after its
last step while process 0 waits for it in the all-reduce of the next until the layout's time
limit. The report names the hazard. (With one process there is no one to disagree with.)"""

EXPECTED = {
    "train: 2 processes x 4 devices": 0,
    "train: 4 processes x 2 devices": 0,
}
REASONS = {
    "train: 2 processes x 4 devices": "process 0 began step 6 of 6, process 1 began step 4 of 6: the processes ran different numbers of steps",
    "train: 4 processes x 2 devices": "not trained in this layout, as train hung in another",
}
HANG = "the last-batch hazard"


def train(num_steps, seed):
    mesh = data_mesh()
    step = jax.jit(train_step)
    losses = []
    with jax.set_mesh(mesh):
        state = jax.device_put(init_state(seed), jax.NamedSharding(mesh, jax.P()))
        for i in range(min(num_steps, local_batch_count(seed))):  # this process's data only
            batch = make_global_batch(local_batch(i, seed), mesh)
            state, loss = step(state, batch, jax.random.fold_in(jax.random.key(seed), i))
            losses.append(loss)
    return state["params"], losses
