"""The explicit step gathers the state over `data` before it starts and trains with tensor
parallelism alone, returning the state split over `model` only: right values, and its collectives
are ones the task allows, but no FSDP at all: every device holds twice (or, on 4 x 2, four times)
its share of the state after the step, so it keeps the values alone."""

EXPECTED = {
    "explicit_step: technique": 0,
    "explicit_step: memory": 0,
    "explicit_step: peak memory": 0,
}
REASONS = {
    "explicit_step: technique": "params/w1 is held (512 bytes per device)",
    "explicit_step: memory": "not checked until the technique holds",
    "explicit_step: peak memory": "not checked until the technique holds",
}


def explicit_step(params, opt_state, batch):
    tp_only = {"w1": jax.P(None, "model"), "w2": jax.P("model", None)}
    rows = jax.P("data", None)
    params, mu = jax.tree.map(jax.reshard, (params, opt_state["mu"]), (tp_only, tp_only))

    @jax.jit
    def step(params, mu, batch):
        loss, grads = jax.value_and_grad(lambda p: block_loss(p, batch["x"], batch["y"], out_sharding=rows))(params)
        params, mu = sgd_momentum(params, mu, grads)
        return params, mu, loss

    params, mu, loss = step(params, mu, batch)
    return params, {"mu": mu}, loss
