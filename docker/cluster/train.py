"""Assignment 03's reference training as a cluster job: srun (or mpirun) starts this file once per
GPU, and ``jax.distributed.initialize()`` finds the coordinator, the rank and the process count in
the variables the engine set. Every process runs every step; process 0 prints the losses.

    srun python docker/cluster/train.py --steps 20        # inside train_gpu.sbatch
    jaxcourse launch --via slurm -n 2 -d 4 -- python docker/cluster/train.py --steps 3   # on CPUs
"""

import argparse

import jax

jax.distributed.initialize()  # before anything else touches JAX's devices

from solutions.multiprocess_training import train  # noqa: E402  (the instructor's checkout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="at most this many steps (the data may hold fewer)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    me = jax.process_index()
    print(
        f"process {me} of {jax.process_count()}: {jax.local_device_count()} local of {jax.device_count()} "
        f"{jax.devices()[0].platform} devices"
    )
    _, losses = train(args.steps, args.seed)
    if me == 0:
        for step, loss in enumerate(losses):
            print(f"step {step}: loss {float(loss):.6f}")


if __name__ == "__main__":
    main()
