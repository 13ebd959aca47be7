"""Lockstep games: B games advance together, finished ones restart in place.

The parts every lockstep loop shares: a batch of fresh games, in-place restarts (a `jnp.where`
over the batch, never a per-game `lax.cond`, which under `vmap` would run both branches
anyway), and the running statistics of finished games. The learners' training steps are
assembled from these by `jaxgames.learning.lockstep`; `play_step` and `rollout` drive games with
a fixed batched policy (benchmarks, tests, random play). The arena (`jaxgames.evaluation`)
plays every game to its end instead, with a policy per seat.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxgames.core import Game, State
from jaxgames.policies import Policy
from jaxgames.types import Array, PRNGKey


class Transition(NamedTuple):
    """One lockstep step of B games; every field has leading axis B.

    Attributes:
        board: the boards before the move.
        current_player: int32[B], the movers.
        action: int32[B], the actions played.
        rewards: float32[B, num_players], rewards earned by the move.
        terminated: bool[B], whether the move ended the game (the game was then restarted).
    """

    board: Array
    current_player: Array
    action: Array
    rewards: Array
    terminated: Array


class Stats(NamedTuple):
    """Running totals over the finished games.

    Attributes:
        moves: int32, moves played.
        finished: int32, games finished.
        wins: int32[num_players], games in which that player alone got the top reward.
        draws: int32, finished games without a single top scorer.
        reward_sum: float32[num_players], summed final rewards.
    """

    moves: Array
    finished: Array
    wins: Array
    draws: Array
    reward_sum: Array


def empty_stats(num_players: int) -> Stats:
    return Stats(
        moves=jnp.int32(0),
        finished=jnp.int32(0),
        wins=jnp.zeros(num_players, jnp.int32),
        draws=jnp.int32(0),
        reward_sum=jnp.zeros(num_players, jnp.float32),
    )


def init_batch(game: Game, batch_size: int, key: PRNGKey) -> State:
    """B fresh games (State with leading axis B)."""
    return jax.vmap(game.init)(jax.random.split(key, batch_size))


def restart_finished(game: Game, states: State, key: PRNGKey) -> State:
    """Replaces the terminated games of a batch by fresh ones, in place.

    Deterministic games share one initial state, so no per-game keys are drawn for them.
    """
    batch_size = states.terminated.shape[0]
    if game.stochastic:
        fresh = init_batch(game, batch_size, key)
    else:
        one = game.init(key)
        fresh = jax.tree.map(lambda x: jnp.broadcast_to(x, (batch_size, *x.shape)), one)
    done = states.terminated

    def pick(new: Array, old: Array) -> Array:
        return jnp.where(done.reshape(done.shape + (1,) * (old.ndim - 1)), new, old)

    return jax.tree.map(pick, fresh, states)


def update_stats(stats: Stats, live: Array, rewards: Array, terminated: Array) -> Stats:
    """Adds one lockstep step to the running totals.

    Args:
        live: bool[B], which games made a move (not already over before it).
        rewards: float32[B, N], rewards of the step.
        terminated: bool[B], games over after the step.
    """
    ended = terminated & live
    top = jnp.max(rewards, axis=-1, keepdims=True)
    sole_top = (rewards == top) & (jnp.sum(rewards == top, axis=-1, keepdims=True) == 1)
    return Stats(
        moves=stats.moves + jnp.sum(live, dtype=jnp.int32),
        finished=stats.finished + jnp.sum(ended, dtype=jnp.int32),
        wins=stats.wins + jnp.sum(sole_top & ended[:, None], axis=0, dtype=jnp.int32),
        draws=stats.draws + jnp.sum(ended & ~jnp.any(sole_top, axis=-1), dtype=jnp.int32),
        reward_sum=stats.reward_sum + jnp.sum(jnp.where(ended[:, None], rewards, 0.0), axis=0),
    )


class Carry(NamedTuple):
    states: State
    stats: Stats


def play_step(
    game: Game, policy: Policy, carry: Carry, key: PRNGKey, record: bool = True
) -> tuple[Carry, Transition | None]:
    """One lockstep move of every game in the batch, then in-place restarts.

    Only `legal_action_mask`, `terminated` and `rewards` of the states are read (and `board`,
    `current_player` when `record`), so any State-like pytree with those fields can be driven.
    """
    policy_key, step_key, reset_key = jax.random.split(key, 3)
    states = carry.states
    actions = policy(states, policy_key).astype(jnp.int32)
    if game.stochastic:
        step_keys = jax.random.split(step_key, actions.shape[0])
        nxt = jax.vmap(game.step)(states, actions, step_keys)
    else:
        nxt = jax.vmap(game.step, in_axes=(0, 0, None))(states, actions, None)
    live = ~states.terminated
    stats = update_stats(carry.stats, live, nxt.rewards, nxt.terminated)
    transition = None
    if record:
        transition = Transition(
            board=states.board,
            current_player=states.current_player,
            action=actions,
            rewards=nxt.rewards,
            terminated=nxt.terminated,
        )
    return Carry(restart_finished(game, nxt, reset_key), stats), transition


@functools.partial(jax.jit, static_argnames=("game", "policy", "batch_size", "num_steps", "record"))
def rollout(
    game: Game,
    policy: Policy,
    batch_size: int,
    num_steps: int,
    key: PRNGKey,
    record: bool = True,
) -> tuple[Carry, Transition | None]:
    """Plays `num_steps` lockstep moves of `batch_size` games from fresh starts.

    Args:
        game: the game (static).
        policy: batched policy `policy(states, key) -> int32[B]` (static; a module-level
            function or a cached closure, so that it hashes the same on every call).
        batch_size: B.
        num_steps: T, moves per game slot; finished games restart in place.
        key: PRNG key.
        record: whether to return the per-step transitions (memory O(T * B * board)).

    Returns:
        `(carry, transitions)`: the final live states and the totals (`carry.stats`), and the
        transitions with leading axes [T, B] (None when `record` is False).
    """
    init_key, scan_key = jax.random.split(key)
    carry = Carry(init_batch(game, batch_size, init_key), empty_stats(game.num_players))

    def body(carry: Carry, step_key: PRNGKey) -> tuple[Carry, Transition | None]:
        return play_step(game, policy, carry, step_key, record)

    return jax.lax.scan(body, carry, jax.random.split(scan_key, num_steps))
