"""The perfect Connect Four player and the MCTS opponent: correctness and speed tables.

    python benchmarks/connect_four.py solver            # all 6,000 Pons positions
    python benchmarks/connect_four.py moves             # AB move times, empty board and 9-12 stones
    python benchmarks/connect_four.py games [--games 1000]   # AB vs random, MCTS vs random
    python benchmarks/connect_four.py perfect           # perfect vs perfect from the empty board

Pons' test sets are read from ../shared/data/connect4-testsets (not shipped with the package).
"""

from __future__ import annotations

import argparse
import pathlib
import time

import jax
import numpy as np

import jaxgames
from jaxgames.evaluation import arena
from jaxgames.opponents import make_opponent, random_policy
from jaxgames.opponents.connect_four import perfect_player

DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "connect4-testsets"
SETS = ["end-easy", "middle-easy", "middle-medium", "begin-easy", "begin-medium", "begin-hard"]


def solver_table(limit: int | None) -> None:
    solver = perfect_player(6, 7).solver
    solver.solve(*solver.position([3]))  # compile
    print(f"{'set':<16}{'positions':>10}{'wrong':>7}{'mean ms':>10}{'max ms':>10}{'nodes/s':>12}")
    for name in SETS:
        lines = [
            line.split() for line in (DATA / f"{name}.txt").read_text().splitlines() if line.strip()
        ][:limit]
        times, wrong, nodes0 = [], 0, int(solver.nodes[0])
        for moves, score in lines:
            position = solver.position([int(c) - 1 for c in moves])
            start = time.perf_counter()
            wrong += solver.solve(*position) != int(score)
            times.append(time.perf_counter() - start)
        rate = (int(solver.nodes[0]) - nodes0) / sum(times)
        print(
            f"{name:<16}{len(times):>10}{wrong:>7}{np.mean(times) * 1e3:>10.2f}"
            f"{np.max(times) * 1e3:>10.1f}{rate:>12,.0f}",
            flush=True,
        )


def move_times(count: int) -> None:
    game = jaxgames.make("connect_four")
    player = perfect_player(6, 7)
    player.best_moves(np.asarray(game.init(None).board))  # compile
    rng = np.random.default_rng(0)
    rows = [("empty board", [np.asarray(game.init(None).board)])]
    positions = []
    while len(positions) < count:
        state, stones = game.init(None), int(rng.integers(9, 13))
        while int(state.step_count) < stones and not bool(state.terminated):
            state = jaxgames.checked_step(
                game, state, int(rng.choice(jaxgames.legal_actions(state)))
            )
        if not bool(state.terminated):
            positions.append(np.asarray(state.board))
    rows.append(("random 9-12 stones", positions))
    print(f"{'positions':<22}{'count':>7}{'median ms':>12}{'max ms':>10}  (AB move, fresh caches)")
    for label, boards in rows:
        times = []
        for board in boards:
            player._best.clear()
            player._cache.clear()
            start = time.perf_counter()
            player.choose(board, 0, "ab")
            times.append(time.perf_counter() - start)
        print(
            f"{label:<22}{len(times):>7}{np.median(times) * 1e3:>12.2f}"
            f"{np.max(times) * 1e3:>10.1f}",
            flush=True,
        )


def games_table(games: int, mcts_games: int) -> None:
    game = jaxgames.make("connect_four")
    for name, count in (("perfect", games), ("mcts:1000", mcts_games)):
        start = time.perf_counter()
        result = arena(game, make_opponent(name, game), random_policy, count, jax.random.key(0))
        print(
            f"{name} vs random, {count} games per seat: {result.overall}; "
            + "; ".join(f"as player {s}: {r.win_rate:.3f}" for s, r in result.by_seat.items())
            + f" ({time.perf_counter() - start:.0f}s)",
            flush=True,
        )


def perfect_game() -> None:
    game = jaxgames.make("connect_four")
    player = make_opponent("perfect-dl", game)
    state, key, moves = game.init(None), jax.random.key(0), []
    while not bool(state.terminated):
        key, sub = jax.random.split(key)
        action = int(player(jax.tree.map(lambda x: x[None], state), sub)[0])
        moves.append(action)
        state = game.step(state, action, None)
    print(
        f"AB-DL vs AB-DL: {len(moves)} moves, rewards {np.asarray(state.rewards).tolist()}, "
        f"moves {moves}"
    )
    print(game.render(state))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("solver")
    s.add_argument("--limit", type=int, default=None, help="positions per set (default all)")
    m = sub.add_parser("moves")
    m.add_argument("--count", type=int, default=50)
    g = sub.add_parser("games")
    g.add_argument("--games", type=int, default=1000, help="AB games per seat")
    g.add_argument("--mcts-games", type=int, default=100, help="MCTS games per seat")
    sub.add_parser("perfect")
    args = parser.parse_args(argv)
    if args.command == "solver":
        solver_table(args.limit)
    elif args.command == "moves":
        move_times(args.count)
    elif args.command == "games":
        games_table(args.games, args.mcts_games)
    else:
        perfect_game()


if __name__ == "__main__":
    main()
