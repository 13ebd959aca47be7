"""Several seeds in one run against one run per seed: the same agents, and the wall time.

    python benchmarks/seeds.py [--preset connect4-td-farl] [--seeds 10] [--games 20000]

Trains `--seeds` agents of the preset (seeds 0 .. N-1, `--games` games each, evaluated at the
end against the preset's opponent unless `--eval-games 0`), once as one `train.seeds: N` run
(one process, one compiled step, every agent's chunk in turn) and once as N separate runs, one
after another in this process as N `jaxgames train` commands would run (each compiles its own
step: separate processes cannot share it, and the persistent compilation cache is off here).
Prints the wall time of each way, their ratio, and whether every agent's parameters are equal
bit for bit.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time

import jax
import numpy as np

from jaxgames import presets
from jaxgames.training import train, train_seeds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="connect4-td-farl")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--batch-size", type=int, default=0, help="0: the preset's")
    parser.add_argument("--eval-games", type=int, default=0, help="0: no evaluation")
    args = parser.parse_args()
    jax.config.update("jax_enable_compilation_cache", False)
    config = presets.load(args.preset)
    t = dataclasses.replace(
        config.train,
        games=args.games,
        seeds=args.seeds,
        checkpoint_every=0,
        average_from=None,
        batch_size=args.batch_size or config.train.batch_size,
    )
    ev = dataclasses.replace(config.eval, every=0, games=max(args.eval_games, 1))
    config = dataclasses.replace(config, train=t, eval=ev)
    print(
        f"{args.preset}: {args.seeds} seeds x {args.games:,} games, B = {t.batch_size}, "
        f"jax {jax.__version__} on {jax.devices()[0].platform}, {jax.device_count()} device(s)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tick = time.perf_counter()
        together = train_seeds(config, f"{tmp}/together", progress=False)
        one_run = time.perf_counter() - tick
        tick, alone = time.perf_counter(), []
        for k in range(args.seeds):
            single = dataclasses.replace(
                config, train=dataclasses.replace(t, seed=t.seed + k, seeds=1)
            )
            jax.clear_caches()  # as a new process would: compile again
            alone.append(train(single, f"{tmp}/alone-{k}", progress=False))
        separate = time.perf_counter() - tick
    same = [
        all(
            np.array_equal(np.asarray(a), np.asarray(b))
            for a, b in zip(
                jax.tree.leaves(x.carry.params), jax.tree.leaves(y.carry.params), strict=True
            )
        )
        for x, y in zip(together, alone, strict=True)
    ]
    print(f"{'way':<28}{'wall s':>10}{'compile s':>11}")
    print(f"{'one run, train.seeds':<28}{one_run:>10.1f}{together[0].compile_time:>11.1f}")
    compile_alone = sum(r.compile_time for r in alone)
    print(f"{'separate runs, one by one':<28}{separate:>10.1f}{compile_alone:>11.1f}")
    print(f"one run takes {one_run / separate:.2f}x the time of the separate runs")
    print(f"agents equal bit for bit: {sum(same)} of {len(same)}")
    if args.eval_games:
        scores = [r.history[-1]["score"] for r in together]
        print("final scores (one run):", ", ".join(f"{s:+.3f}" for s in scores))


if __name__ == "__main__":
    main()
