"""Othello's positional players "Heur" and "Bench" (van der Ree and Wiering; GBG's opponents).

Both are one-ply greedy: each legal move is scored by the weighted disc difference after it,
sum over occupied squares of weight(square) * (+1 own disc, -1 opponent's disc), and the best
is played (random among ties; a pass when it is the only move). They differ only in the
square weights, given row by row from the top-left corner.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import core
from jaxgames.core import Game, State

_HEUR_TOP = [
    [100, -25, 10, 5, 5, 10, -25, 100],
    [-25, -25, 2, 2, 2, 2, -25, -25],
    [10, 2, 5, 1, 1, 5, 2, 10],
    [5, 2, 1, 2, 2, 1, 2, 5],
]
HEUR_WEIGHTS = np.array(_HEUR_TOP + _HEUR_TOP[::-1], np.float32)
BENCH_WEIGHTS = np.array(
    [
        [80, -26, 24, -1, -5, 28, -18, 76],
        [-23, -39, -18, -9, -6, -8, -39, -1],
        [46, -16, 4, 1, -3, 6, -20, 52],
        [-13, -5, 2, -1, 4, 3, -12, -2],
        [-5, -6, 1, -2, -3, 0, -9, -5],
        [48, -13, 12, 5, 0, 5, -24, 41],
        [-27, -53, -11, -1, -11, -16, -58, -15],
        [87, -25, 27, -1, 5, 36, -3, 100],
    ],
    np.float32,
)
WEIGHTS = {"heur": HEUR_WEIGHTS, "bench": BENCH_WEIGHTS}


def move_scores(game: Game, weights: np.ndarray, state: State) -> jax.Array:
    """float32[65]: the weighted disc difference for the mover after each action (unbatched;
    illegal actions score -inf)."""
    mover = state.current_player
    after = jax.vmap(game.afterstate, in_axes=(None, 0))(state, jnp.arange(game.num_actions))
    own = after.board == (mover + 1).astype(jnp.int8)
    opp = after.board == (2 - mover).astype(jnp.int8)
    w = jnp.asarray(weights)
    score = jnp.sum(jnp.where(own, w, 0.0) - jnp.where(opp, w, 0.0), axis=(-2, -1))
    return jnp.where(state.legal_action_mask, score, -jnp.inf)


@functools.cache
def positional_policy(game: Game, name: str):
    """The batched "heur" or "bench" player for Othello (ValueError otherwise)."""
    if game.name != "othello":
        raise ValueError(f"the {name!r} player plays Othello, not {game.name!r}")
    if name not in WEIGHTS:
        raise ValueError(f"positional player {name!r}; expected one of {', '.join(WEIGHTS)}")
    weights = WEIGHTS[name]

    def one(state: State, key: jax.Array) -> jax.Array:
        scores = move_scores(game, weights, state)
        return core.argmax_random(key, scores, state.legal_action_mask)

    def policy(states: State, key: jax.Array) -> jax.Array:
        return jax.vmap(one)(states, jax.random.split(key, states.terminated.shape[0]))

    return policy
