"""The uniformly random player, and epsilon-greedy play around any policy (the capstone
report's three policies: random, greedy, epsilon-greedy)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import jax
import jax.numpy as jnp

from jaxgames import core
from jaxgames.policies import ParamPolicy, as_param_policy


def random_policy(states: core.State, key: core.PRNGKey) -> jax.Array:
    """A uniformly random legal action for every state of a batch.

    Args:
        states: a State with leading batch axis B (or unbatched).
        key: a PRNG key.

    Returns:
        int32[B] actions.
    """
    return core.sample_legal(key, states.legal_action_mask)


@dataclasses.dataclass(frozen=True)
class _EpsilonGreedy:
    """`fn(params, states, key)`: a random legal move with probability epsilon, else `inner`'s."""

    inner: Callable
    epsilon: float

    def __call__(self, params, states: core.State, key: core.PRNGKey) -> jax.Array:
        coin_key, random_key, inner_key = jax.random.split(key, 3)
        greedy = self.inner(params, states, inner_key)
        explore = jax.random.uniform(coin_key, greedy.shape) < self.epsilon
        return jnp.where(explore, random_policy(states, random_key), greedy)


def epsilon_greedy(policy, epsilon: float) -> ParamPolicy:
    """`policy` (plain or ParamPolicy) made epsilon-greedy: in each game and move, a uniformly
    random legal move with probability `epsilon` (ValueError outside [0, 1])."""
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"epsilon={epsilon}: expected a probability in [0, 1]")
    policy = as_param_policy(policy)
    return ParamPolicy(_EpsilonGreedy(policy.fn, float(epsilon)), policy.params)
