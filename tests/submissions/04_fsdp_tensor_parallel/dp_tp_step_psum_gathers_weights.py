"""A DP x TP step without tensor parallelism, spelled with the only collective it may run: each
device places its columns of w1 (and rows of w2) in zeros of full size and all-reduces them over
`model`, trains the whole MLP on its rows of the batch, and returns its own block of the update.
Only all-reduces, right values and the state held as it should be; but each device multiplies the
whole MLP, four times the reference's FLOPs on a `model` axis of 4: it keeps the values alone."""

EXPECTED = {
    "dp_tp_step: technique": 0,
    "dp_tp_step: memory": 0,
}
REASONS = {
    "dp_tp_step: technique": "runs 4.00x the reference's FLOPs per device",
    "dp_tp_step: memory": "not checked until the technique holds",
}


def dp_tp_step(params, opt_state, batch, key):
    def local_step(params, mu, batch, key):
        model, me = jax.lax.axis_size("model"), jax.lax.axis_index("model")
        keep = jax.random.bernoulli(jax.random.fold_in(key, jax.lax.axis_index("data")), KEEP, batch["y"].shape)
        width = params["w1"].shape[1]
        w1 = jnp.zeros((params["w1"].shape[0], width * model), params["w1"].dtype)
        w2 = jnp.zeros((width * model, params["w2"].shape[1]), params["w2"].dtype)
        whole = {
            "w1": jax.lax.psum(jax.lax.dynamic_update_slice_in_dim(w1, params["w1"], me * width, axis=1), "model"),
            "w2": jax.lax.psum(jax.lax.dynamic_update_slice_in_dim(w2, params["w2"], me * width, axis=0), "model"),
        }

        def loss_of(whole):
            out = jnp.where(keep, jax.nn.relu(batch["x"] @ whole["w1"]) @ whole["w2"] / KEEP, 0.0)
            return jnp.mean(jnp.square(out - batch["y"])) / jax.lax.axis_size("data")

        loss, grads = jax.value_and_grad(loss_of)(whole)  # summed over data, as the reference's are
        mine = {
            "w1": jax.lax.dynamic_slice_in_dim(grads["w1"], me * width, width, axis=1),
            "w2": jax.lax.dynamic_slice_in_dim(grads["w2"], me * width, width, axis=0),
        }
        params, mu = sgd_momentum(params, mu, mine)
        return params, mu, jax.lax.psum(loss, "data")

    weights = {"w1": jax.P(None, "model"), "w2": jax.P("model", None)}
    rows = jax.P("data")
    step = jax.shard_map(local_step, in_specs=(weights, weights, rows, jax.P()), out_specs=(weights, weights, jax.P()))
    params, mu, loss = step(params, opt_state["mu"], batch, key)
    return params, {"mu": mu}, loss
