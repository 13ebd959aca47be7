"""Trained Connect Four 6x7 agents side by side: one table, the same opponents for every agent.

    python benchmarks/agents.py runs/c4-ntuple runs/c4-linear runs/c4-cnn-dqn [--quick]

For each run folder (its newest checkpoint): what it is, games trained and training seconds,
then win rates against random (the capstone report's metric, every seat), against MCTS with 200
simulations (every seat), against the perfect player AB with the agent moving first (GBG's
protocol), the accuracy of its position values on the UCI 8-ply set (sign over won and lost
positions), and the capstone report's UCI protocol (the agent plays every UCI position against
random).
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np

import jaxgames
from jaxgames import evaluation
from jaxgames.datasets import load_uci_connect4
from jaxgames.opponents import make_opponent, random_policy


def describe(agent) -> str:
    ap, al = agent.config.approximator, agent.config.algorithm
    extra = {"linear": f" ({ap.features})", "cnn": f" {list(ap.channels)}"}.get(ap.kind, "")
    return f"{ap.kind}{extra} {al.kind}"


def seat_rates(result: evaluation.ArenaResult) -> str:
    d = result.to_dict()["by_seat"]
    return " / ".join(f"{d[s]['win_rate']:.3f}" for s in sorted(d))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--random-games", type=int, default=10_000, help="per seat")
    parser.add_argument("--mcts-games", type=int, default=100, help="per seat")
    parser.add_argument("--perfect-games", type=int, default=200, help="agent first")
    parser.add_argument("--quick", action="store_true", help="10x fewer games, no UCI set")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    key = jax.random.key(args.seed)
    game = jaxgames.make("connect_four")
    boards, outcomes = load_uci_connect4()
    rows = []
    for run in args.runs:
        agent = jaxgames.load(run)
        if agent.game != game:
            raise SystemExit(f"{run}: trained on {agent.game!r}, this table is for 6x7")
        start = time.perf_counter()
        policy = agent.batched()
        rand = evaluation.arena(
            game, policy, random_policy, args.random_games // scale, jax.random.fold_in(key, 1)
        )
        mcts = evaluation.arena(
            game,
            policy,
            make_opponent("mcts:200", game),
            max(1, args.mcts_games // scale),
            jax.random.fold_in(key, 2),
        )
        perfect = evaluation.arena(
            game,
            policy,
            make_opponent("perfect", game),
            max(1, args.perfect_games // scale),
            jax.random.fold_in(key, 3),
            seats="first",
        )
        if args.quick:
            uci_acc = uci_vs = float("nan")
        else:
            acc = evaluation.uci_connect4_accuracy(agent.position_values, boards, outcomes, game)
            uci_acc = acc["decisive_accuracy"]
            versus = evaluation.uci_connect4_versus(
                game, policy, random_policy, boards, jax.random.fold_in(key, 4)
            )
            uci_vs = versus.win_rate
        rows.append(
            [
                run,
                describe(agent),
                f"{agent.meta.get('games', 0):,}",
                f"{agent.meta.get('train_seconds', 0.0):.0f}",
                seat_rates(rand),
                seat_rates(mcts),
                f"{perfect.to_dict()['win_rate']:.3f}",
                f"{uci_acc:.3f}",
                f"{uci_vs:.3f}",
                f"{time.perf_counter() - start:.0f}",
            ]
        )
        print(" | ".join(rows[-1]), flush=True)
    header = [
        "run",
        "agent",
        "games",
        "train s",
        "vs random (1st / 2nd)",
        "vs MCTS-200 (1st / 2nd)",
        "vs AB, first",
        "UCI accuracy",
        "UCI vs random",
        "eval s",
    ]
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(
        f"\nrandom: {args.random_games // scale} games per seat; MCTS: "
        f"{max(1, args.mcts_games // scale)} per seat; AB: {max(1, args.perfect_games // scale)}"
        " games, agent first; UCI: decisive-position sign accuracy, and win rate playing every "
        "position against random."
    )


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
