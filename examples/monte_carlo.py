"""A toy learner: Monte Carlo returns over afterstates (Sutton & Barto, section 5.1).

Every afterstate a player produces in a game is remembered; when the game ends, each moves
toward the final reward of the player who produced it. No bootstrapping, no eligibility:
just enough to show the parts every learner has (docs/adding-a-learner.md walks through it).

    import examples.monte_carlo  # registers algorithm kind "monte_carlo"
    jaxgames train my-preset.yaml   # with  algorithm: {kind: monte_carlo, alpha: ..., ...}
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, NamedTuple

import jax
import jax.numpy as jnp

from jaxgames import selfplay
from jaxgames.approximators import Hits, ValueModel
from jaxgames.core import Game, State
from jaxgames.learning import lockstep, register_learner
from jaxgames.learning.api import AlgorithmConfig, LearnerDef
from jaxgames.types import Array, PRNGKey


# 1. The settings: what `algorithm:` in a preset loads (gamma, random_opening_moves, alpha and
#    epsilon come from AlgorithmConfig).
@dataclasses.dataclass(frozen=True)
class MonteCarloConfig(AlgorithmConfig):
    kind: Literal["monte_carlo"] = "monte_carlo"


# 2. The carry: what the training scan threads through, and what checkpoints save.
class Carry(NamedTuple):
    states: State  # the B games in progress
    params: Any
    scratch: Any
    trail: Array  # features of each game's afterstates so far, [B, max_moves, ...]
    trail_player: Array  # int32[B, max_moves]: who produced each
    trail_length: Array  # int32[B]
    games: Array
    moves: Array
    key: PRNGKey


def heads(game: Game, config: MonteCarloConfig) -> tuple[int, int]:
    """One value head over afterstates per player."""
    return game.num_players, 1


def init_carry(
    game: Game, model: ValueModel, config: MonteCarloConfig, batch_size: int, key: PRNGKey
) -> Carry:
    params_key, games_key, key = jax.random.split(key, 3)
    params = model.init(params_key)
    states = selfplay.init_batch(game, batch_size, games_key)
    one = model.features(game.init(games_key))
    return Carry(
        states=states,
        params=params,
        scratch=model.init_scratch(params),
        trail=jnp.zeros((batch_size, game.max_moves, *one.shape), one.dtype),
        trail_player=jnp.zeros((batch_size, game.max_moves), jnp.int32),
        trail_length=jnp.zeros(batch_size, jnp.int32),
        games=jnp.int32(0),
        moves=jnp.int32(0),
        key=key,
    )


# 3. What the greedy agent maximises: r + V(afterstate), V = 0 once the game is over.
def action_scores(
    game: Game, model: ValueModel, config: MonteCarloConfig, params: Any, state: State
) -> Array:
    player = state.current_player
    after = jax.vmap(game.afterstate, in_axes=(None, 0))(state, jnp.arange(game.num_actions))
    values = jax.vmap(lambda a: model.value(params, player, model.features(a), 0))(after)
    return after.rewards[:, player] + jnp.where(after.terminated, 0.0, values)


class Decision(NamedTuple):
    action: Array
    random: Array  # the driver counts random moves
    after: State  # the driver steps and restarts from the afterstates
    features: Array


# 4. The training step, from two phases the lockstep driver calls: choose and learn.
def make_step(game: Game, model: ValueModel, config: MonteCarloConfig, batch_size: int):
    rows = jnp.arange(batch_size)

    def choose(carry: Carry, epsilon: Array, key: PRNGKey) -> Decision:
        def one(state, key):
            scores = action_scores(game, model, config, carry.params, state)
            forced = state.step_count < config.random_opening_moves
            action, random = lockstep.epsilon_greedy(
                tuple(jax.random.split(key, 3)), scores, state.legal_action_mask, epsilon, forced
            )
            after = game.afterstate(state, action)
            return Decision(action, random, after, model.features(after))

        return jax.vmap(one)(carry.states, jax.random.split(key, batch_size))

    def learn(carry: Carry, d: Decision, nxt: State, alpha: Array, keys) -> tuple[Carry, Any]:
        trail = carry.trail.at[rows, carry.trail_length].set(d.features)
        trail_player = carry.trail_player.at[rows, carry.trail_length].set(
            carry.states.current_player
        )
        length = carry.trail_length + 1
        done = nxt.terminated
        # Each afterstate of a game that just ended moves toward its producer's final reward.
        flat = trail.reshape(-1, *trail.shape[2:])
        player = trail_player.reshape(-1)
        final = jnp.take_along_axis(nxt.rewards, trail_player, axis=1).reshape(-1)
        value = jax.vmap(lambda p, f: model.value(carry.params, p, f, 0))(player, flat)
        valid = (done[:, None] & (jnp.arange(game.max_moves) < length[:, None])).reshape(-1)
        delta = final - value
        slope = model.derivative(value)
        hits = Hits(player, jnp.zeros_like(player), flat, delta * slope, valid, slope * slope)
        params, scratch = model.update(carry.params, carry.scratch, hits, alpha)
        carry = carry._replace(
            params=params,
            scratch=scratch,
            trail=trail,
            trail_player=trail_player,
            trail_length=jnp.where(done, 0, length),
        )
        return carry, lockstep.Learned(
            jnp.sum(jnp.where(valid, jnp.abs(delta), 0.0)), jnp.sum(valid, dtype=jnp.int32)
        )

    # The key of the carry is split into these parts every step (the driver needs the first
    # three; a stochastic game also needs "chance").
    roles = ("next", "choose", "reset", "chance")
    return lockstep.make_step(game, roles, config.epsilon, config.alpha, choose, learn)


# 5. The record of functions, registered under its kind.
LEARNER = LearnerDef(
    config_type=MonteCarloConfig,
    heads=heads,
    init_carry=init_carry,
    make_step=make_step,
    action_scores=action_scores,
)
register_learner("monte_carlo", LEARNER)
