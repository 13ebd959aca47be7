"""The uniformly random player."""

from __future__ import annotations

import jax

from jaxgames import core


def random_policy(states: core.State, key: core.PRNGKey) -> jax.Array:
    """A uniformly random legal action for every state of a batch.

    Args:
        states: a State with leading batch axis B (or unbatched).
        key: a PRNG key.

    Returns:
        int32[B] actions.
    """
    return core.sample_legal(key, states.legal_action_mask)
