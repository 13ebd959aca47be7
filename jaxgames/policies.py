"""Batched policies: the form in which agents, opponents and the arena exchange moves.

A policy is batched: `policy(states, key) -> int32[B]`, with `states` a State whose fields have
a leading axis B. A `ParamPolicy` keeps a policy's parameters apart from its (static)
function, so that jitted callers compile once per function, not once per parameter set.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import NamedTuple

from jaxgames.core import State
from jaxgames.types import Array, PRNGKey

Policy = Callable[[State, PRNGKey], Array]


class ParamPolicy(NamedTuple):
    """A policy with its parameters kept apart, so jitted callers compile once per `fn`.

    Attributes:
        fn: `fn(params, states, key) -> int32[B]`, static (hashable, stable across calls).
        params: a pytree passed to `fn` as a traced argument (None for fixed policies).
    """

    fn: Callable
    params: object = None


@dataclasses.dataclass(frozen=True)
class _Fixed:
    """A plain policy as a ParamPolicy function (equal for the same policy object)."""

    policy: Policy

    def __call__(self, params, states: State, key: PRNGKey) -> Array:
        del params
        return self.policy(states, key)


def as_param_policy(policy: Policy | ParamPolicy) -> ParamPolicy:
    """Wraps a plain batched policy; ParamPolicies pass through."""
    return policy if isinstance(policy, ParamPolicy) else ParamPolicy(_Fixed(policy), None)
