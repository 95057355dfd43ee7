"""What the launcher tests run in several processes, shared by the local launcher's tests and the
cluster engines' (each must give the same results and reports)."""


def global_sum(scale):
    import jax
    import jax.numpy as jnp

    mesh = jax.make_mesh((jax.device_count(),), ("i",), axis_types=(jax.sharding.AxisType.Explicit,))
    local = jnp.full((jax.local_device_count(),), float(jax.process_index() + 1)) * scale
    x = jax.make_array_from_process_local_data(jax.NamedSharding(mesh, jax.P("i")), local)
    total = jax.jit(jax.shard_map(lambda v: jax.lax.psum(v, "i"), mesh=mesh, in_specs=jax.P("i"), out_specs=jax.P()))
    print("devices", jax.device_count(), "local", jax.local_device_count())
    return {"rank": jax.process_index(), "sum": total(x)}


def crash_in_one():
    import time

    import jax

    if jax.process_index() == 1:
        raise RuntimeError("process one gave up")
    time.sleep(60)


def one_never_arrives():
    import time

    import jax
    import jax.numpy as jnp

    mesh = jax.make_mesh((jax.device_count(),), ("i",), axis_types=(jax.sharding.AxisType.Explicit,))
    if jax.process_index() == 1:
        time.sleep(600)  # never reaches the collective below
    x = jax.make_array_from_process_local_data(
        jax.NamedSharding(mesh, jax.P("i")), jnp.ones((jax.local_device_count(),))
    )
    return jax.jit(jax.shard_map(lambda v: jax.lax.psum(v, "i"), mesh=mesh, in_specs=jax.P("i"), out_specs=jax.P()))(x)
