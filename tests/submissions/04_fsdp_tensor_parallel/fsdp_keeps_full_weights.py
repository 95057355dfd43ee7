"""The FSDP step gathers the weights, all-reduces the whole gradients and updates whole weights
on every device, then returns them whole: right values, but every device ends the step holding
all of the parameters (and their momentum), and the all-reduce sends twice what a reduce-scatter
would."""

EXPECTED = {
    "fsdp_step: memory": 0,
    "fsdp_step: communication": 0,
}
REASONS = {
    "fsdp_step: memory": "params/w1 is held whole on every device (2048 bytes per device); fsdp_step keeps 1/8 of it (256 bytes)",
    "fsdp_step: communication": "the closed form for fsdp_step is 7175 bytes",
}


def fsdp_step(params, opt_state, batch):
    def local_step(shards, mu, batch):
        whole, mu = jax.tree.map(lambda w: jax.lax.all_gather(w, "data", axis=0, tiled=True, to="invarying"), (shards, mu))
        loss, grads = jax.value_and_grad(mlp_loss)(whole, batch["x"], batch["y"])
        whole, mu = sgd_momentum(whole, mu, jax.tree.map(lambda g: g / jax.lax.axis_size("data"), grads))
        return whole, mu, jax.lax.pmean(loss, "data")

    rows = jax.P("data")
    step = jax.shard_map(local_step, in_specs=rows, out_specs=jax.P())
    params, mu, loss = step(params, opt_state["mu"], batch)
    return params, {"mu": mu}, loss
