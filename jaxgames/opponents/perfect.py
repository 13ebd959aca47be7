"""Perfect players for small games by exhaustive Max-N search (TicTacToe, Nim, Nim3P, ...).

`solve(game)` enumerates every reachable state with the game's own jitted `step` (breadth-first,
in batches), then backs the final rewards up the game graph: in each state the mover picks the
moves that maximise its own total reward (Max-N; minimax for two zero-sum players). Ties among
best moves are broken uniformly at random by the player, so a state's value vector is the mean
over its best moves. The result is a table indexed by the board read in base P plus the player
to move, so the batched policy is a gather.

Only for games whose boards fit such a table (P^cells * N up to about 10^7 keys).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import core
from jaxgames.core import Game, State

MAX_KEYS = 20_000_000
TIE_TOLERANCE = 1e-6


class PerfectTable(NamedTuple):
    """Max-N solution of a game.

    Attributes:
        move_values: float32[keys, A, N], each player's total reward-to-come after each move
            under perfect play (NaN for illegal moves and unreachable states).
        best: bool[keys, A], the moves that maximise the mover's own value.
        num_states: reachable non-terminal states.
    """

    move_values: np.ndarray
    best: np.ndarray
    num_states: int


def state_key(game: Game, state: State) -> jax.Array:
    """int32 table key of an (unbatched) state: board in base P, plus player * P^cells."""
    spec = game.board_spec
    cells = spec.encode(state).astype(jnp.int32)
    place = jnp.asarray(spec.num_cell_states ** np.arange(spec.num_cells), jnp.int32)
    return jnp.sum(cells * place) + state.current_player * spec.num_cell_states**spec.num_cells


def _num_keys(game: Game) -> int:
    spec = game.board_spec
    return spec.num_cell_states**spec.num_cells * game.num_players


def supports(game: Game) -> bool:
    """Whether `game` is small enough for an exhaustive table."""
    return game.board_spec is not None and not game.stochastic and _num_keys(game) <= MAX_KEYS


@functools.cache
def solve(game: Game) -> PerfectTable:
    """Solves `game` exhaustively (cached per game). Raises ValueError if it is too large."""
    if not supports(game):
        raise ValueError(
            f"{game!r} is too large (or random) for an exhaustive Max-N table; "
            f"supported up to {MAX_KEYS:,} keys"
        )
    num_actions = game.num_actions
    expand = jax.jit(
        jax.vmap(jax.vmap(game.step, in_axes=(None, 0, None)), in_axes=(0, None, None))
    )
    keys_of = jax.jit(jax.vmap(lambda s: state_key(game, s)))

    # Breadth-first enumeration; children[k] = list of (action, child key, reward, terminal).
    start = jax.tree.map(lambda x: x[None], game.init(jax.random.key(0)))
    frontier, seen = start, {int(keys_of(start)[0])}
    children: dict[int, list[tuple[int, int, np.ndarray, bool]]] = {}
    actions = jnp.arange(num_actions)
    while frontier.terminated.shape[0]:
        parents = np.asarray(keys_of(frontier))
        legal = np.asarray(frontier.legal_action_mask)
        after = expand(frontier, actions, None)  # [F, A]
        child_keys = np.asarray(jax.vmap(keys_of)(after))
        rewards = np.asarray(after.rewards)
        done = np.asarray(after.terminated)
        fresh = []
        for i, parent in enumerate(parents):
            moves = children.setdefault(int(parent), [])
            for a in np.flatnonzero(legal[i]):
                key = int(child_keys[i, a])
                moves.append((int(a), key, rewards[i, a], bool(done[i, a])))
                if not done[i, a] and key not in seen:
                    seen.add(key)
                    fresh.append((i, int(a)))
        if not fresh:
            break
        rows, cols = np.array(fresh).T
        frontier = jax.tree.map(lambda x, r=rows, c=cols: x[r, c], after)

    # Back up the values (memoised recursion; depth is at most the game length).
    n = game.num_players
    move_values = np.full((_num_keys(game), num_actions, n), np.nan, np.float32)
    best = np.zeros((_num_keys(game), num_actions), bool)
    value_of: dict[int, np.ndarray] = {}

    def value(key: int) -> np.ndarray:
        if key in value_of:
            return value_of[key]
        mover = key // game.board_spec.num_cell_states**game.board_spec.num_cells
        for action, child, reward, terminal in children[key]:
            move_values[key, action] = reward + (0.0 if terminal else value(child))
        mine = move_values[key, :, mover]
        top = np.nanmax(mine)
        best[key] = np.nan_to_num(mine, nan=-np.inf) >= top - TIE_TOLERANCE
        value_of[key] = move_values[key][best[key]].mean(axis=0)
        return value_of[key]

    value(int(keys_of(start)[0]))
    return PerfectTable(move_values, best, len(children))


@functools.cache
def perfect_policy(game: Game):
    """The batched perfect player: uniformly random among the Max-N best moves."""
    table = solve(game)
    best = jnp.asarray(table.best)

    def policy(states: State, key: jax.Array) -> jax.Array:
        keys = jax.vmap(lambda s: state_key(game, s))(states)
        mask = best[keys] & states.legal_action_mask
        # States outside the table (none in a real game) fall back to any legal move.
        mask = jnp.where(mask.any(-1, keepdims=True), mask, states.legal_action_mask)
        return core.sample_legal(key, mask)

    return policy


def move_values(game: Game, state: State) -> np.ndarray:
    """float32[A, N]: each player's reward-to-come after each move of `state` under perfect
    play (NaN for illegal moves). Host-side, unbatched.

    Raises:
        ValueError: the state is not a position of a game in progress that the game can reach
            (cells or player out of range, a finished game, an unreachable board).
    """
    table = solve(game)
    spec = game.board_spec
    cells = np.asarray(spec.encode(state))
    if cells.shape != (spec.num_cells,):
        raise ValueError(f"{game!r}: expected {spec.num_cells} cells, got shape {cells.shape}")
    if cells.min() < 0 or cells.max() >= spec.num_cell_states:
        raise ValueError(
            f"{game!r}: cell states {cells.tolist()} are outside 0..{spec.num_cell_states - 1}"
        )
    player = int(np.asarray(state.current_player))
    if not 0 <= player < game.num_players:
        raise ValueError(f"{game!r}: player {player} is not in 0..{game.num_players - 1}")
    if bool(np.asarray(state.terminated)):
        raise ValueError(f"{game!r}: the game is over; no move has a value")
    values = table.move_values[int(state_key(game, state))]
    if np.isnan(values).all():
        raise ValueError(f"{game!r}: no game reaches this position with player {player} to move")
    return values
