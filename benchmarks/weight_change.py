"""How far one lockstep step moves the weights per game: one update against sub-batches.

    python benchmarks/weight_change.py

Trains the Connect Four TD-FARL preset for 100k games at B = 256 and at B = 4096 (one update
per step), then from that same carry plays 20 single steps with one update per step and, at
B = 4096, with `algorithm.sub_batch: 256`, and prints the mean L1 change of the weights per
game per step. The moves are the same in both (the same key, chosen from the weights at the
start of each step); only how the update is applied differs.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import presets
from jaxgames.builders import make_learner

BASE = presets.load("connect4-td-farl")


def _learner(batch: int, sub_batch: int, steps: int):
    algorithm = dataclasses.replace(BASE.algorithm, sub_batch=sub_batch)
    train = dataclasses.replace(BASE.train, batch_size=batch, chunk_steps=steps)
    return make_learner(dataclasses.replace(BASE, algorithm=algorithm, train=train))


def main() -> None:
    print(f"{'B':>6}{'update':>14}{'L1 change per game':>20}")
    for batch in (256, 4096):
        warm = _learner(batch, 0, 40)
        carry = warm.init(jax.random.key(0))
        while int(carry.games) < 100_000:
            carry, _ = warm.chunk(carry)
        for sub in (0, 256) if batch > 256 else (0,):
            step = _learner(batch, sub, 1)
            moved, state = [], jax.tree.map(jnp.copy, carry)
            for _ in range(20):
                before = np.asarray(state.params["w"])
                state, _ = step.chunk(state)
                moved.append(np.abs(np.asarray(state.params["w"]) - before).sum() / batch)
            name = f"{batch // sub} x {sub}" if sub else "one"
            print(f"{batch:>6}{name:>14}{np.mean(moved):>20.4g}", flush=True)


if __name__ == "__main__":
    main()
