"""The explicit step is the reference's but for one word: its jit donates nothing, so while the
step runs each device holds the old parameters and momentum beside the new ones. Its values,
collectives and the memory it holds at rest are right; at its peak one device needs 1.25x the
reference's memory (4740 bytes against 3780 on the visible case), and it loses the peak-memory
part."""

EXPECTED = {
    "explicit_step: peak memory": 0,
}
REASONS = {
    "explicit_step: peak memory": "donate the state the step replaces (donate_argnums)",
}


def explicit_step(params, opt_state, batch):
    weights = {"w1": jax.P("data", "model"), "w2": jax.P("model", "data")}
    rows = jax.P("data", None)

    def step(params, mu, batch):
        def loss_of(params):
            whole = {
                "w1": jax.reshard(params["w1"], jax.P(None, "model")),
                "w2": jax.reshard(params["w2"], jax.P("model", None)),
            }
            return block_loss(whole, batch["x"], batch["y"], out_sharding=rows)

        loss, grads = jax.value_and_grad(loss_of)(params)
        params, mu = sgd_momentum(params, mu, grads)
        return params, mu, loss

    jitted = jax.jit(step, in_shardings=(weights, weights, rows), out_shardings=(weights, weights, jax.P()))
    params, mu, loss = jitted(params, opt_state["mu"], batch)
    return params, {"mu": mu}, loss
