"""The 2-D step folds the device's index along `model` into the dropout key too: the devices of
one row of the mesh, which hold the same examples and the same block output, drop different
values of it, so the step is no longer the reference's; and what a step teaches is judged only on
a step that is right."""

EXPECTED = {
    "dp_tp_step: values": 0,
    "dp_tp_step: hidden values": 0,
    "dp_tp_step: technique": 0,
    "dp_tp_step: memory": 0,
}
REASONS = {
    "dp_tp_step: values": "differ",
    "dp_tp_step: hidden values": "differ",
    "dp_tp_step: technique": "not checked until the values are right on at least one case",
    "dp_tp_step: memory": "not checked until the values are right on at least one case",
}


def dp_tp_step(params, opt_state, batch, key):
    def local_step(params, mu, batch, key):
        mine = jax.random.fold_in(jax.random.fold_in(key, jax.lax.axis_index("data")), jax.lax.axis_index("model"))
        keep = jax.random.bernoulli(mine, KEEP, batch["y"].shape)

        def loss_of(params):
            out = megatron_mlp(batch["x"], params["w1"], params["w2"], "model")
            out = jnp.where(keep, out / KEEP, 0.0)
            loss = jnp.mean(jnp.square(out - batch["y"])) / jax.lax.axis_size("data")
            return jax.lax.pmean(loss, "model")

        loss, grads = jax.value_and_grad(loss_of)(params)
        params, mu = sgd_momentum(params, mu, grads)
        return params, mu, jax.lax.psum(loss, "data")

    weights = {"w1": jax.P(None, "model"), "w2": jax.P("model", None)}
    rows = jax.P("data")
    step = jax.shard_map(local_step, in_specs=(weights, weights, rows, jax.P()), out_specs=(weights, weights, jax.P()))
    params, mu, loss = step(params, opt_state["mu"], batch, key)
    return params, {"mu": mu}, loss
