"""Monte Carlo tree search opponents (mctx), batched over many games, for any 1- or 2-player game.

The search uses the game's own `step` as the model: uniform priors over legal moves and, as the
value of a new node, the outcome of one uniformly random playout to the end of the game (from
the point of view of the player to move there). Two-player values alternate in sign along the
tree (discount -1), one-player values add up (discount 1); terminal nodes stop the backup
(discount 0). The move played is the most visited one (ties at random). With
`num_simulations` simulations per move this is GBG's "MCTS" opponent.

mctx's trees carry one value per node, so games with more than two players are not supported.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import mctx

from jaxgames import core
from jaxgames.core import Game, State


def playout_value(game: Game, state: State, key: jax.Array) -> jax.Array:
    """Total reward of `state.current_player` over one random playout to the end (unbatched).

    Rewards already earned by the step into `state` are not counted.
    """
    player = state.current_player

    def cond(carry):
        return ~carry[0].terminated

    def body(carry):
        s, total, key = carry
        key, k_move, k_step = jax.random.split(key, 3)
        s = game.step(s, core.sample_legal(k_move, s.legal_action_mask), k_step)
        return s, total + s.rewards[player], key

    _, total, _ = jax.lax.while_loop(cond, body, (state, jnp.float32(0.0), key))
    return total


def _uniform_logits(states: State) -> jax.Array:
    return jnp.where(states.legal_action_mask, 0.0, -1e9).astype(jnp.float32)


@functools.cache
def mcts_policy(game: Game, num_simulations: int):
    """The batched MCTS player with `num_simulations` simulations per move (cached)."""
    if game.num_players > 2:
        raise ValueError(
            f"MCTS supports games of 1 or 2 players; {game.name} has {game.num_players}"
        )
    if num_simulations < 1:
        raise ValueError(f"num_simulations must be >= 1, got {num_simulations}")
    sign = -1.0 if game.num_players == 2 else 1.0

    def values(states: State, key: jax.Array) -> jax.Array:
        keys = jax.random.split(key, states.terminated.shape[0])
        v = jax.vmap(lambda s, k: playout_value(game, s, k))(states, keys)
        return jnp.where(states.terminated, 0.0, v)

    def recurrent_fn(params, key, action, states: State):
        del params
        step_key, value_key = jax.random.split(key)
        movers = states.current_player
        nxt = jax.vmap(game.step)(states, action, jax.random.split(step_key, action.shape[0]))
        reward = jnp.take_along_axis(nxt.rewards, movers[:, None], axis=1)[:, 0]
        discount = jnp.where(nxt.terminated, 0.0, sign).astype(jnp.float32)
        out = mctx.RecurrentFnOutput(
            reward=reward,
            discount=discount,
            prior_logits=_uniform_logits(nxt),
            value=values(nxt, value_key),
        )
        return out, nxt

    def policy(states: State, key: jax.Array) -> jax.Array:
        root_key, search_key, tie_key = jax.random.split(key, 3)
        root = mctx.RootFnOutput(
            prior_logits=_uniform_logits(states),
            value=values(states, root_key),
            embedding=states,
        )
        out = mctx.muzero_policy(
            params=None,
            rng_key=search_key,
            root=root,
            recurrent_fn=recurrent_fn,
            num_simulations=num_simulations,
            invalid_actions=~states.legal_action_mask,
            dirichlet_fraction=0.0,
        )
        visits = out.search_tree.summary().visit_counts
        mask = states.legal_action_mask
        return core.argmax_random(tie_key, visits.astype(jnp.float32), mask)

    return policy
