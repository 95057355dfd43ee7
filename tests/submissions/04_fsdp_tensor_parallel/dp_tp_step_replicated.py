"""The DP x TP step gathers every array whole onto every device and computes the step there: no
data parallelism and no tensor parallelism. Its values are right, and it keeps only them: its
compiled step gathers the weights and the batch over both axes, and every device ends the step
holding all of the weights and their momentum, not its quarter."""

EXPECTED = {
    "dp_tp_step: technique": 0,
    "dp_tp_step: memory": 0,
}
REASONS = {
    "dp_tp_step: technique": "the compiled HLO runs all-gather",
    "dp_tp_step: memory": "not checked until the technique holds",
}


def dp_tp_step(params, opt_state, batch, key):
    params, mu, batch = jax.tree.map(lambda v: jax.reshard(v, jax.P()), (params, opt_state["mu"], batch))
    data = jax.sharding.get_abstract_mesh().shape["data"]
    rows, d = batch["x"].shape[0] // data, params["w2"].shape[1]
    keep = jnp.concatenate([jax.random.bernoulli(jax.random.fold_in(key, i), KEEP, (rows, d)) for i in range(data)])
    loss, grads = jax.value_and_grad(mlp_loss)(params, batch["x"], batch["y"], keep)
    params, mu = sgd_momentum(params, mu, grads)
    return params, {"mu": mu}, loss
