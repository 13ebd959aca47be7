"""Demo: random lockstep self-play of every game, with outcome rates and throughput.

python train/random_play.py [--batch-size B] [--steps T]
"""

from __future__ import annotations

import argparse
import time

import jax

import jaxgames
from jaxgames import selfplay
from jaxgames.opponents import random_policy


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=200, help="lockstep moves per game slot")
    args = parser.parse_args(argv)
    for name in jaxgames.available_games():
        game = jaxgames.make(name)
        args_ = (game, random_policy, args.batch_size, args.steps)
        jax.block_until_ready(selfplay.rollout(*args_, jax.random.key(0), record=False))
        start = time.perf_counter()
        carry, _ = jax.block_until_ready(selfplay.rollout(*args_, jax.random.key(1), record=False))
        elapsed = time.perf_counter() - start
        s = carry.stats
        games = int(s.finished)
        wins = ", ".join(f"player {p} {int(w) / games:.1%}" for p, w in enumerate(s.wins))
        print(
            f"{name}: {games:,} random games in {elapsed:.2f}s "
            f"({games / elapsed:,.0f} games/s, {int(s.moves) / elapsed:,.0f} moves/s); "
            f"wins: {wins}; draws {int(s.draws) / games:.1%}"
        )
        one = jax.tree.map(lambda x: x[0], carry.states)
        print("  " + game.render(one).replace("\n", "\n  "))


if __name__ == "__main__":
    main()
