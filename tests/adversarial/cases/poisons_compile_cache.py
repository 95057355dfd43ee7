"""Tries to poison the class's compile cache, which every container of the class reads: add a
program, overwrite one, remove one. The cache is mounted read-only, so every write must fail;
a container that finds no cache at all fails too (the cache would prove nothing)."""

EXPECTED = {}
EXTRA_CELL = """import os
cache = os.environ.get("JAX_COMPILATION_CACHE_DIR")
if not cache or not os.listdir(cache):
    raise RuntimeError(f"no compile cache at {cache!r}")
done = []
entry = os.path.join(cache, sorted(os.listdir(cache))[0])
for name, attempt in [
    ("add", lambda: open(os.path.join(cache, "jit_evil-cache"), "wb").write(b"evil")),
    ("overwrite", lambda: open(entry, "r+b").write(b"evil")),
    ("remove", lambda: os.remove(entry)),
]:
    try:
        attempt()
        done.append(name)
    except OSError:
        pass
if done:
    raise RuntimeError(f"changed the compile cache: {done}")"""
