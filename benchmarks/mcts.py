"""MCTS search cost against its number of simulations: our search loop beside `mctx.search`.

    python benchmarks/mcts.py [--game hex] [--batch 4] [--sims 250 1000 4000] [--mctx-max 4000]

Both build the same tree from the same keys (tests/test_mcts.py); the table shows seconds per
search of a batch of starting positions (compile excluded) and microseconds per simulation.
A flat per-simulation cost means a search linear in its simulations; mctx's batched backup
grows with the tree, so its searches above `--mctx-max` simulations are skipped.
"""

from __future__ import annotations

import argparse
import time

import jax

import jaxgames
from jaxgames.opponents import mcts
from jaxgames.selfplay import init_batch


def timed(fn, *args) -> float:
    jax.block_until_ready(fn(*args))  # compile
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="hex")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--sims", type=int, nargs="+", default=[250, 1000, 4000])
    parser.add_argument("--mctx-max", type=int, default=4000)
    args = parser.parse_args()
    game = jaxgames.make(args.game)
    states = init_batch(game, args.batch, jax.random.key(0))
    root_fn, recurrent_fn = mcts.playout_model(game)
    root = root_fn(states, jax.random.key(1))
    invalid = ~states.legal_action_mask
    key = jax.random.key(2)

    def ours(sims):
        return jax.jit(lambda k: mcts.search(root, recurrent_fn, sims, k, invalid).node_visits)

    def theirs(sims):
        return jax.jit(lambda k: mcts.mctx_search(root, recurrent_fn, sims, k, invalid).node_visits)

    print(f"{game!r}, {args.batch} searches in lockstep, {jax.devices()[0].platform}")
    print("| simulations | ours s | ours us/sim | mctx.search s | mctx us/sim | mctx / ours |")
    print("|---:|---:|---:|---:|---:|---:|")
    for sims in args.sims:
        t_ours = timed(ours(sims), key)
        cells = [f"{sims:,}", f"{t_ours:.3f}", f"{t_ours / sims * 1e6:.0f}"]
        if sims <= args.mctx_max:
            t_mctx = timed(theirs(sims), key)
            cells += [f"{t_mctx:.3f}", f"{t_mctx / sims * 1e6:.0f}", f"{t_mctx / t_ours:.1f}x"]
        else:
            cells += ["-", "-", "-"]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
