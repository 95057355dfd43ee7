"""Every device draws its dropout mask from the same key: a different model from the reference's,
but the step is right where dropout plays no part, so its one all-reduce still counts."""

EXPECTED = {
    "train_step: values": 0,
    "train_step: dropout": 0,
    "train: 1 process x 8 devices": 0,
    "train: 2 processes x 4 devices": 0,
    "train: 4 processes x 2 devices": 0,
}
REASONS = {
    "train_step: values": "yet the step is right when dropout plays no part: look at the dropout keys",
    "train_step: dropout": "device 0 and devices 1, 2, 3, 4, 5, 6, 7 draw the same dropout mask",
    "train: 1 process x 8 devices": "the loss history differs from the reference run's",
    "train: 2 processes x 4 devices": "the loss history differs from the reference run's",
    "train: 4 processes x 2 devices": "the loss history differs from the reference run's",
}


def train_step(state, batch, key):
    def per_device(state, batch, key):
        params = jax.lax.pcast(state["params"], "data", to="varying")
        loss, grads = jax.value_and_grad(loss_fn)(params, batch, key)
        grads, loss = jax.lax.pmean((grads, loss), "data")
        updates, opt_state = optimizer.update(grads, state["opt_state"], state["params"])
        return {"params": optax.apply_updates(state["params"], updates), "opt_state": opt_state}, loss

    everywhere, by_example = jax.P(), jax.P("data")
    step = jax.shard_map(per_device, in_specs=(everywhere, by_example, everywhere), out_specs=(everywhere, everywhere))
    return step(state, batch, key)
