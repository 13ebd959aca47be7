"""Learning targets as tiny pure functions (rlax naming: v_tm1, r_t, discount_t, v_t).

Termination is `discount_t = 0`. Targets are wrapped in `stop_gradient`, so they can be used in
losses over differentiable approximators as well as in the sparse n-tuple update. The FARL
learners build every target with `td_target`; max/min Q-learning with `minimax_q_target`.
"""

from __future__ import annotations

import math

import chex
import jax
import jax.numpy as jnp

from jaxgames.types import Array


def td_target(r_t: Array, discount_t: Array, v_t: Array) -> Array:
    """r_t + discount_t * v_t."""
    return jax.lax.stop_gradient(r_t + discount_t * v_t)


def q_learning_target(r_t: Array, discount_t: Array, q_t: Array, legal_t: Array) -> Array:
    """r_t + discount_t * max over legal a of q_t[a] (no legal action: the max counts as 0)."""
    best = jnp.max(jnp.where(legal_t, q_t, -jnp.inf), axis=-1)
    best = jnp.where(jnp.any(legal_t, axis=-1), best, 0.0)
    return td_target(r_t, discount_t, best)


def minimax_q_target(
    r_t: Array, discount_t: Array, q_t: Array, legal_t: Array, maximise_t: Array
) -> Array:
    """r_t + discount_t * best(q_t): one Q function from the first player's point of view,
    best = the max over legal actions of q_t when the first player moves in s_t (maximise_t),
    the min when the second does; 0 without a legal action (unbatched: q_t, legal_t [A]).
    """
    chex.assert_rank([r_t, q_t, legal_t, maximise_t], [0, 1, 1, 0])
    chex.assert_type([q_t, legal_t], [float, bool])
    sign = jnp.where(maximise_t, 1.0, -1.0)
    best = jnp.max(jnp.where(legal_t, sign * q_t, -jnp.inf), axis=-1)
    return td_target(r_t, discount_t, jnp.where(jnp.any(legal_t), sign * best, 0.0))


def horizon(lam: float, cut: float = 0.1) -> int:
    """Eligibility horizon h = 1 + floor(ln(cut) / ln(lambda)): the last h states whose weight
    lambda^k is at least `cut` share each TD error (GBG, after Jaskowski). lambda = 0 gives 1.
    """
    if not 0.0 <= lam < 1.0:
        raise ValueError(f"lambda must be in [0, 1), got {lam}")
    if not 0.0 < cut < 1.0:
        raise ValueError(f"horizon cut must be in (0, 1), got {cut}")
    return 1 if lam == 0.0 else 1 + math.floor(math.log(cut) / math.log(lam))
