"""An FSDP step that all-reduces the whole gradients and then keeps its own rows of them, where a
reduce-scatter would hand each device its rows directly: right values, the state held as it
should be at rest, and only what FSDP may send; it is FSDP, wasteful: the all-reduce sends twice
what a reduce-scatter does, 1.5x the reference's bytes in all, and it loses the communication
part alone."""

EXPECTED = {
    "fsdp_step: communication": 0,
}
REASONS = {
    "fsdp_step: communication": "sends 1.50x the reference's bytes per device over 'data'",
}


def fsdp_step(params, opt_state, batch):
    def local_step(shards, mu, batch):
        whole = jax.tree.map(lambda w: jax.lax.all_gather(w, "data", axis=0, tiled=True, to="invarying"), shards)
        loss, grads = jax.value_and_grad(mlp_loss)(whole, batch["x"], batch["y"])
        me = jax.lax.axis_index("data")
        grads = jax.tree.map(lambda g, w: jax.lax.dynamic_slice_in_dim(g, me * len(w), len(w)) / jax.lax.axis_size("data"),
                             grads, shards)
        shards, mu = sgd_momentum(shards, mu, grads)
        return shards, mu, jax.lax.pmean(loss, "data")

    rows = jax.P("data")
    step = jax.shard_map(local_step, in_specs=rows, out_specs=(rows, rows, jax.P()))
    params, mu, loss = step(params, opt_state["mu"], batch)
    return params, {"mu": mu}, loss
