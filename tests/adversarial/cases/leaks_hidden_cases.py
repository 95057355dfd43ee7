"""Tries to carry the hidden cases into its own feedback. The cells start a thread that waits for
the hidden cases to reach the sandbox, then writes them, as its notebook's error, into a results
file of the first phase and onto its output; and each function's hidden exports raise with the
shapes they were traced on. The grader had sealed the first phase's results before it handed the
hidden cases over, and never shows a hidden case's words: the notebook earns full marks on its
visible cases, loses its hidden values (and its all-reduce's, which gathers with this all-gather),
and no report or feedback names a hidden mesh."""

EXPECTED = {
    "ring_all_gather: hidden values": 0,
    "ring_all_reduce: hidden values": 0,  # the reference's all-reduce calls the notebook's all-gather
}
MESSAGE_OF = {
    "ring_all_gather: hidden values": "hidden case 4x2",
    "ring_all_reduce: hidden values": "hidden case 4x2",
}
EXTRA_CELL = """import json, os, sys, threading, time
def _leak(out=sys.argv[3], job=os.path.dirname(sys.argv[2])):
    while not os.path.exists(os.path.join(job, "hidden.json")):
        time.sleep(0.002)
    hidden = open(os.path.join(job, "hidden.json")).read()
    print("hidden cases:", hidden, flush=True)
    fake = {"version": 1, "notebook": {"status": "error", "message": "the hidden cases: " + hidden}, "meshes": {}, "tests": {}}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(fake, f)
threading.Thread(target=_leak, daemon=True).start()"""


def ring_all_gather(x, axis_name):
    mesh = jax.sharding.get_abstract_mesh()
    if dict(zip(mesh.axis_names, mesh.axis_sizes)) == {"x": 4, "y": 2}:
        raise ValueError(f"hidden case 4x2 x {axis_name} {x.shape} {x.dtype}")
    n = jax.lax.axis_size(axis_name)
    me = jax.lax.axis_index(axis_name)
    right = [(i, (i + 1) % n) for i in range(n)]
    blocks = jnp.zeros((n,) + x.shape, x.dtype).at[me].set(x)
    block = x
    for step in range(1, n):
        block = jax.lax.ppermute(block, axis_name, right)
        blocks = blocks.at[(me - step) % n].set(block)
    return blocks.reshape((n * x.shape[0],) + x.shape[1:])
