"""The step gathers the whole batch onto every device and accumulates the gradient over the eight
devices' slices there, each with its own dropout key: the right update, but no data parallelism.
Its values are right; its compiled program gathers the batch, which a data-parallel step never
does, so it loses the collectives points, and its per-slice dropout keys are not judged: it keeps
its values alone."""

EXPECTED = {
    "train_step: collectives": 0,
    "train_step: dropout": 0,
}
REASONS = {
    "train_step: collectives": "the program uses all-gather",
    "train_step: dropout": "not checked until the collectives are right",
}


def train_step(state, batch, key):
    whole = jax.tree.map(lambda a: jax.reshard(a, jax.P()), batch)
    slices = jax.tree.map(lambda a: a.reshape((8, -1) + a.shape[1:]), whole)

    def one_device(d, piece):
        return jax.value_and_grad(loss_fn)(state["params"], piece, jax.random.fold_in(key, d))

    losses, grads = jax.vmap(one_device)(jax.numpy.arange(8), slices)
    grads = jax.tree.map(lambda g: g.mean(axis=0), grads)
    updates, opt_state = optimizer.update(grads, state["opt_state"], state["params"])
    return {"params": optax.apply_updates(state["params"], updates), "opt_state": opt_state}, losses.mean()
