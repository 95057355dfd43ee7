"""Gradients and loss summed over 'data' instead of averaged: 8 times too large, so plain SGD
takes 8 times the step. The step is wrong even where dropout plays no part."""

EXPECTED = {
    "train_step: values": 0,
    "train_step: collectives": 0,
    "train_step: dropout": 0,
    "train: 1 process x 8 devices": 0,
    "train: 2 processes x 4 devices": 0,
    "train: 4 processes x 2 devices": 0,
}
REASONS = {
    "train_step: values": "every parameter moved 8 times as far as the reference's: are the gradients summed, not averaged?",
    "train_step: collectives": "every parameter moved 8 times as far as the reference's: are the gradients summed, not averaged?",
    "train_step: dropout": "every parameter moved 8 times as far as the reference's: are the gradients summed, not averaged?",
    "train: 1 process x 8 devices": "the loss history differs from the reference run's",
    "train: 2 processes x 4 devices": "the loss history differs from the reference run's",
    "train: 4 processes x 2 devices": "the loss history differs from the reference run's",
}


def train_step(state, batch, key):
    def per_device(state, batch, key):
        key = jax.random.fold_in(key, jax.lax.axis_index("data"))
        params = jax.lax.pcast(state["params"], "data", to="varying")
        loss, grads = jax.value_and_grad(loss_fn)(params, batch, key)
        grads, loss = jax.lax.psum((grads, loss), "data")
        updates, opt_state = optimizer.update(grads, state["opt_state"], state["params"])
        return {"params": optax.apply_updates(state["params"], updates), "opt_state": opt_state}, loss

    everywhere, by_example = jax.P(), jax.P("data")
    step = jax.shard_map(per_device, in_specs=(everywhere, by_example, everywhere), out_specs=(everywhere, everywhere))
    return step(state, batch, key)
