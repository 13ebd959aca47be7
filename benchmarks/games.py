"""Random lockstep self-play throughput of every game, with pgx measured in the same run.

Both libraries run through the same driver, `jaxgames.selfplay.rollout` (uniform random legal
moves, in-place restarts, running totals): pgx environments are wrapped in a `Game` record, so
the only difference between the two columns is the game's own `init`/`step`. The "driver" row is
the same loop around a trivial step (a fixed-length game that only counts moves): the ceiling no
game can pass. Timings are the best of `--repeats` runs, compile time measured separately.
The "step only" columns time the game's batched step alone (the same positions and actions
again and again), without the driver's per-move cost of drawing a random legal action, which
grows with the number of actions and dilutes the ratio for Hex (121) and Othello (65).

    python benchmarks/games.py                       # all games, B = 1, 256, 4096, 16384
    python benchmarks/games.py --games connect_four --batch-sizes 4096
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import sys
import time

import jax
import jax.numpy as jnp

import jaxgames
from jaxgames import core, selfplay
from jaxgames.opponents import random_policy

PGX_NAMES = {
    "tictactoe": "tic_tac_toe",
    "connect_four": "connect_four",
    "hex": "hex",
    "othello": "othello",
    "2048": "2048",
}
# Options that make our game the one pgx implements (pgx's Hex is 11x11, with a swap move that
# random play uses now and then; we have no swap rule).
BENCH_OPTIONS = {"hex": {"size": 11}}
MOVES_PER_RUN = 2_000_000


def trivial_game(num_actions: int = 7, length: int = 21) -> core.Game:
    """A game that ends after `length` moves whatever is played: measures the driver alone."""

    def init(key=None):
        del key
        return core.State(
            board=jnp.zeros((1,), jnp.int8),
            current_player=jnp.int32(0),
            legal_action_mask=jnp.ones(num_actions, jnp.bool_),
            rewards=jnp.zeros(2, jnp.float32),
            terminated=jnp.bool_(False),
            step_count=jnp.int32(0),
        )

    def step(state, action, key=None):
        del key
        count = state.step_count + 1
        done = count >= length
        winner = action % 2  # depends on the action, so the policy cannot be optimised away
        rewards = jnp.where(done, jnp.where(jnp.arange(2) == winner, 1.0, -1.0), 0.0)
        return state.replace(
            step_count=count,
            terminated=done,
            rewards=rewards.astype(jnp.float32),
            current_player=1 - state.current_player,
        )

    return core.Game(
        name="driver",
        num_players=2,
        num_actions=num_actions,
        board_shape=(1,),
        options=(),
        init=init,
        step=step,
        observe=None,
        afterstate=step,
        chance=core.no_chance,
        render=None,
        action_names=tuple(map(str, range(num_actions))),
    )


def pgx_game(name: str) -> core.Game | None:
    """The pgx environment of a jaxgames game, as a Game record driven like ours (or None)."""
    if name not in PGX_NAMES or importlib.util.find_spec("pgx") is None:
        return None
    import pgx

    env = pgx.make(PGX_NAMES[name])
    return dataclasses.replace(
        trivial_game(env.num_actions),
        name=f"pgx:{PGX_NAMES[name]}",
        init=lambda key: jax.tree.map(jnp.asarray, env.init(key)),  # pgx Othello has an int
        step=lambda state, action, key=None: env.step(state, action, key),
        stochastic=name == "2048",  # fresh games need their own keys
    )


@dataclasses.dataclass
class Result:
    compile_s: float
    steps_per_s: float
    games_per_s: float


def measure(game: core.Game, batch_size: int, repeats: int) -> Result:
    num_steps = max(16, min(20_000, MOVES_PER_RUN // batch_size))
    key = jax.random.key(0)
    start = time.perf_counter()
    run = selfplay.rollout.lower(game, random_policy, batch_size, num_steps, key, False).compile()
    compile_s = time.perf_counter() - start
    jax.block_until_ready(run(key))  # warm-up
    best, finished = float("inf"), 0
    for seed in range(repeats):
        start = time.perf_counter()
        carry, _ = jax.block_until_ready(run(jax.random.key(seed + 1)))
        elapsed = time.perf_counter() - start
        if elapsed < best:
            best, finished = elapsed, int(carry.stats.finished)
    return Result(compile_s, batch_size * num_steps / best, finished / best)


def measure_step(game: core.Game, batch_size: int, repeats: int, calls: int = 20) -> float:
    """Steps/s of the game's step alone: one jitted batched step applied to the same
    `batch_size` positions (10 random moves into a game) with a random legal action each, so
    that no driver cost (policy sampling, restarts) is counted."""
    key = jax.random.key(0)
    step = jax.jit(jax.vmap(game.step))

    @jax.jit
    def positions(key):
        states = jax.vmap(game.init)(jax.random.split(key, batch_size))
        for i in range(10):
            k = jax.random.fold_in(key, i)
            states = step(
                states, core.sample_legal(k, states.legal_action_mask), _keys(k, batch_size)
            )
        return states

    states = positions(key)
    actions = core.sample_legal(jax.random.key(1), states.legal_action_mask)
    keys = _keys(jax.random.key(2), batch_size)
    jax.block_until_ready(step(states, actions, keys))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            out = step(states, actions, keys)
        jax.block_until_ready(out)
        best = min(best, time.perf_counter() - start)
    return batch_size * calls / best


def _keys(key: jax.Array, n: int) -> jax.Array:
    return jax.random.split(key, n)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=sys.argv[0], description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="*", default=jaxgames.available_games())
    parser.add_argument("--batch-sizes", nargs="*", type=int, default=[1, 256, 4096, 16384])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    print(
        f"jax {jax.__version__} on {jax.devices()[0].device_kind} "
        f"({jax.device_count()} device); best of {args.repeats}"
    )
    header = (
        f"{'game':<14}{'B':>7}{'compile s':>11}{'steps/s':>14}{'games/s':>13}"
        f"{'pgx steps/s':>14}{'vs pgx':>8}{'driver steps/s':>16}"
        f"{'step only':>13}{'pgx step only':>15}{'vs pgx':>8}"
    )
    print(header)
    print("-" * len(header))
    driver = trivial_game()
    ceilings = {b: measure(driver, b, args.repeats).steps_per_s for b in args.batch_sizes}
    for name in args.games:
        game, peer = jaxgames.make(name, **BENCH_OPTIONS.get(name, {})), pgx_game(name)
        for b in args.batch_sizes:
            ours = measure(game, b, args.repeats)
            theirs = measure(peer, b, args.repeats) if peer else None
            pgx_col = f"{theirs.steps_per_s:>14,.0f}" if theirs else f"{'-':>14}"
            ratio = f"{ours.steps_per_s / theirs.steps_per_s:>7.2f}x" if theirs else f"{'-':>8}"
            label = name + "".join(f" {v}" for v in BENCH_OPTIONS.get(name, {}).values())
            alone = measure_step(game, b, args.repeats)
            peer_alone = measure_step(peer, b, args.repeats) if peer else None
            alone_cols = f"{alone:>13,.0f}" + (
                f"{peer_alone:>15,.0f}{alone / peer_alone:>7.2f}x"
                if peer_alone
                else f"{'-':>15}{'-':>8}"
            )
            print(
                f"{label:<14}{b:>7}{ours.compile_s:>11.2f}{ours.steps_per_s:>14,.0f}"
                f"{ours.games_per_s:>13,.0f}{pgx_col}{ratio}{ceilings[b]:>16,.0f}{alone_cols}",
                flush=True,
            )


if __name__ == "__main__":
    main()
