"""Learning benchmarks: training throughput, and strength per training game against batch size.

    python benchmarks/learning.py throughput [--batch-sizes 64 256 1024 4096] [--preset P]
    python benchmarks/learning.py batch --preset tictactoe-td-farl --games 10000 --seeds 3
    python benchmarks/learning.py batch --preset connect4-td-farl --games 100000 --seeds 1
    python benchmarks/learning.py batch --batch-sizes 64 --seeds 10 --combine sequential weight

`throughput` trains a preset (default Connect Four TD-FARL: GBG's 70 8-tuples, TCL, mirror
symmetry) and reports moves/s and games/s, learning included, next to GBG's Java Connect Four
trainer measured on this kind of machine (about 820 games/s and 22,500 moves/s, one thread;
the ratios mean something for Connect Four presets only). `batch` trains a preset for the same
number of games at B = 1, 64, 1024 and evaluates each with the preset's evaluation, so the
table shows whether updating many games in one step costs strength per game.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

import jax
import numpy as np

from jaxgames import presets
from jaxgames.builders import make_learner
from jaxgames.training import train

GBG_GAMES_PER_S, GBG_MOVES_PER_S = 820.0, 22_500.0


def throughput(
    batch_sizes: list[int],
    seconds: float,
    preset: str,
    sub_batches: list[int] | None = None,
    chunk_steps: int = 0,
) -> None:
    """Moves/s and games/s of the preset's training at each B (and each `algorithm.sub_batch`
    of `sub_batches`, for learners that have it; a sub-batch >= B is one update per step),
    with `chunk_steps` lockstep steps per jitted chunk (0: training's automatic choice)."""
    base = presets.load(preset)
    print(f"{preset} training, jax {jax.__version__} on {jax.devices()[0].device_kind}")
    print(
        f"{'B':>6}{'sub':>6}{'compile s':>11}{'moves/s':>12}{'games/s':>11}{'x GBG moves':>13}"
        f"{'x GBG games':>13}"
    )
    subs = sub_batches or [getattr(base.algorithm, "sub_batch", 0)]
    rows = [(b, s) for b in batch_sizes for s in dict.fromkeys(0 if s >= b else s for s in subs)]
    for b, sub in rows:
        algorithm = base.algorithm
        if hasattr(algorithm, "sub_batch"):
            algorithm = dataclasses.replace(algorithm, sub_batch=sub)
        config = dataclasses.replace(
            base,
            algorithm=algorithm,
            train=dataclasses.replace(base.train, batch_size=b, chunk_steps=chunk_steps),
        )
        learner = make_learner(config)
        carry = learner.init(jax.random.key(0))
        start = time.perf_counter()
        chunk = learner.chunk.lower(carry).compile()
        compile_s = time.perf_counter() - start
        carry, _ = chunk(carry)  # warm-up; games get longer as play improves, so measure on
        for _ in range(3):  # play a little past the start
            carry, _ = chunk(carry)
        jax.block_until_ready(carry)
        moves0, games0 = int(carry.moves), int(carry.games)
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            carry, _ = chunk(carry)
            jax.block_until_ready(carry.games)
        elapsed = time.perf_counter() - start
        moves = (int(carry.moves) - moves0) / elapsed
        games = (int(carry.games) - games0) / elapsed
        print(
            f"{b:>6}{sub:>6}{compile_s:>11.1f}{moves:>12,.0f}{games:>11,.0f}"
            f"{moves / GBG_MOVES_PER_S:>12.1f}x{games / GBG_GAMES_PER_S:>12.1f}x",
            flush=True,
        )


def batch_table(
    preset: str, games: int, seeds: int, batch_sizes: list[int], combines: list[str]
) -> None:
    preset_config = presets.load(preset)
    ev = preset_config.eval
    print(
        f"{preset}: {games:,} training games per run, {seeds} seed(s), evaluated against "
        f"{ev.opponent} ({ev.seats} seats, {ev.games} games per seat)"
    )
    print(
        f"{'combine':>11}{'B':>6}{'games':>11}{'train s':>10}{'score':>9}{'win rate':>10}"
        "   per seed"
    )
    rows = [(c, b) for c in combines or [preset_config.approximator.combine] for b in batch_sizes]
    for combine, b in rows:
        base = dataclasses.replace(
            preset_config,
            approximator=dataclasses.replace(preset_config.approximator, combine=combine),
        )
        scores, wins, seconds, played = [], [], [], []
        for seed in range(seeds):
            config = dataclasses.replace(
                base,
                train=dataclasses.replace(
                    base.train, games=games, batch_size=b, seed=seed, chunk_steps=0
                ),
                eval=dataclasses.replace(ev, every=0),
            )
            result = train(config, progress=False)
            final = result.history[-1]
            scores.append(final["score"])
            wins.append(final["win_rate"])
            seconds.append(final["train_seconds"])
            played.append(final["train_games"])
        games_played, train_s = int(np.mean(played)), np.mean(seconds)
        print(
            f"{combine:>11}{b:>6}{games_played:>11,}{train_s:>10.1f}{np.mean(scores):>+9.3f}"
            f"{np.mean(wins):>10.3f}   {[round(s, 3) for s in scores]}",
            flush=True,
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=sys.argv[0], description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    tp = sub.add_parser("throughput")
    tp.add_argument("--batch-sizes", nargs="*", type=int, default=[64, 256, 1024, 4096])
    tp.add_argument("--seconds", type=float, default=10.0)
    tp.add_argument("--preset", default="connect4-td-farl")
    tp.add_argument(
        "--sub-batches", nargs="*", type=int, default=[], help="algorithm.sub_batch values"
    )
    tp.add_argument(
        "--chunk-steps", type=int, default=0, help="steps per jitted chunk (0: automatic)"
    )
    bt = sub.add_parser("batch")
    bt.add_argument("--preset", default="tictactoe-td-farl")
    bt.add_argument("--games", type=int, default=10_000)
    bt.add_argument("--seeds", type=int, default=3)
    bt.add_argument("--batch-sizes", nargs="*", type=int, default=[1, 64, 1024])
    bt.add_argument("--combine", nargs="*", default=[], help="rules to compare (default: preset's)")
    args = parser.parse_args(argv)
    if args.command == "throughput":
        throughput(args.batch_sizes, args.seconds, args.preset, args.sub_batches, args.chunk_steps)
    else:
        batch_table(args.preset, args.games, args.seeds, args.batch_sizes, args.combine)


if __name__ == "__main__":
    main()
