"""Where a lockstep training step's time goes, by throw-away variants of the step.

    python benchmarks/step_profile.py --batch-sizes 256 4096 --seconds 5

For the preset (`--preset`, default `connect4-td-farl`, a TD learner of the FARL family) at
each B it times, in moves/s after a warm-up, the whole step and variants of it with one part
taken out: the update (building the update rows and the sparse scatter: the model's update
returns the parameters unchanged, so XLA drops the rows too), the afterstate values (every
value is 0, so the LUT gathers go; play becomes random tie-breaking, games get shorter, so
it is compared per move), both, and the sub-batched update (`--sub-batch`). The share of a
part is 1 - (time per move without it) / (time per move of the whole step). What remains with
both out is the game step, the random numbers, feature bookkeeping and the driver.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

import jax
import jax.numpy as jnp

from jaxgames import presets
from jaxgames.builders import make_learner
from jaxgames.learning import farl, lockstep


def _moves_per_s(learner, model, settings, seconds: float) -> float:
    step = farl.make_step(learner.game, model, settings, learner.config.train.batch_size)
    chunk = lockstep.jit_chunk(step, 8)
    carry = learner.init(jax.random.key(0))
    for _ in range(20):  # compile and play past the first moves
        carry, _ = chunk(carry)
    jax.block_until_ready(carry)
    moves0, start = int(carry.moves), time.perf_counter()
    while time.perf_counter() - start < seconds:
        carry, _ = chunk(carry)
        jax.block_until_ready(carry.moves)
    return (int(carry.moves) - moves0) / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=sys.argv[0], description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="connect4-td-farl")
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[256, 4096])
    parser.add_argument("--sub-batch", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    base = presets.load(args.preset)
    print(f"{args.preset}, jax {jax.__version__} on {jax.devices()[0].device_kind}")
    print(f"{'B':>6}  {'variant':<34}{'moves/s':>10}{'us/move':>9}{'share':>8}")
    for b in args.batch_sizes:
        config = dataclasses.replace(base, train=dataclasses.replace(base.train, batch_size=b))
        learner = make_learner(config, with_chunk=False)
        model, settings = learner.model, learner.settings
        no_update = dataclasses.replace(model, update=lambda p, s, hits, alpha: (p, s))
        no_values = dataclasses.replace(model, value=lambda p, player, f, a: jnp.float32(0))
        neither = dataclasses.replace(no_update, value=no_values.value)
        variants = [
            ("whole step", model, settings),
            ("without the update (rows, scatter)", no_update, settings),
            ("without the afterstate values", no_values, settings),
            ("without both", neither, settings),
        ]
        if 0 < args.sub_batch < b:
            grouped = dataclasses.replace(settings, sub_batch=args.sub_batch)
            variants.append((f"whole step, sub_batch {args.sub_batch}", model, grouped))
        whole = None
        for name, m, s in variants:
            rate = _moves_per_s(learner, m, s, args.seconds)
            whole = whole or rate
            share = f"{1.0 - whole / rate:.1%}" if name.startswith("without") else "-"
            print(f"{b:>6}  {name:<34}{rate:>10,.0f}{1e6 / rate:>9.2f}{share:>8}", flush=True)


if __name__ == "__main__":
    main()
