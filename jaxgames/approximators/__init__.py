"""Approximators, and `ValueModel`: the form in which learners use any of them.

A ValueModel binds an approximator to a game. Learners only call its functions, so TD, SARSA and
Q-learning combine with every approximator by configuration:

* `features(state)` turns a state into what the approximator reads (n-tuples: LUT indices);
* `afterstate_features(state, features)` gives the features of every action's afterstate,
  [num_actions, ...], incrementally where the game allows it;
* `value(params, player, features, action)` is V_p (value heads) or Q_p(., action) (Q heads);
* `update(params, scratch, hits, alpha)` moves the values of the boards in `hits` by their
  signals (delta * sigma'(v) * lambda^k) and returns the scratch space it needs between calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from jaxgames.approximators import cnn, linear, ntuple
from jaxgames.approximators.ntuple import Hits
from jaxgames.core import Game, State

Array = jax.Array
Params = Any
Features = Any


@dataclasses.dataclass(frozen=True, eq=False)
class ValueModel:
    """An approximator bound to a game (static; hashes by identity).

    Attributes:
        num_players: parameter sets by player.
        num_outputs: 1 for a value head over afterstates, num_actions for a Q head.
        output: "tanh" or "identity", the squashing of the value.
        init: `init(key) -> params`.
        init_scratch: `init_scratch(params) -> scratch` (state `update` keeps between calls).
        features: `features(state) -> F` (unbatched).
        afterstate_features: `afterstate_features(state, F) -> F[num_actions]` (unbatched).
        value: `value(params, player, F, action) -> float32`.
        update: `update(params, scratch, hits, alpha) -> (params, scratch)`, batched over hits.
        net: the underlying static description (e.g. an NTupleNet), for inspection.
        incremental: `afterstate_features` is cheaper than `features` of every afterstate.
    """

    num_players: int
    num_outputs: int
    output: str
    init: Callable[[jax.Array], Params]
    init_scratch: Callable[[Params], Any]
    features: Callable[[State], Features]
    afterstate_features: Callable[[State, Features], Features]
    value: Callable[[Params, Array, Features, Array], Array]
    update: Callable[[Params, Any, Hits, Array], tuple[Params, Any]]
    net: Any = None
    incremental: bool = False

    def derivative(self, value: Array) -> Array:
        """sigma'(x) expressed through the value v = sigma(x): 1 - v^2 for tanh, else 1."""
        return 1.0 - value * value if self.output == "tanh" else jnp.ones_like(value)


def _afterstates_by_features(game: Game, features: Callable[[State], Features]):
    """`afterstate_features` computed from every afterstate (for feature maps that are not
    incremental)."""
    actions = jnp.arange(game.num_actions)

    def afterstate_features(state: State, current: Features) -> Features:
        del current
        after = jax.vmap(game.afterstate, in_axes=(None, 0))(state, actions)
        return jax.vmap(features)(after)

    return afterstate_features


def ntuple_model(game: Game, net: ntuple.NTupleNet, combine: str = "sequential") -> ValueModel:
    """A ValueModel over an n-tuple (or tabular) network; `combine` as in `ntuple.update`."""
    spec = game.board_spec

    def features(state: State) -> Array:
        return ntuple.indices(net, spec.encode(state))

    if spec.changes is not None and not game.stochastic:

        def afterstate_features(state: State, idx: Array) -> Array:
            encoded = spec.encode(state)
            cells, new = spec.changes(state, encoded)
            shift = jax.vmap(lambda c, n: ntuple.index_shift(net, encoded, c, n))(cells, new)
            return idx[None, :] + shift

    else:
        afterstate_features = _afterstates_by_features(game, features)

    def init_scratch(params: Params) -> Array:
        del params
        return ntuple.init_counts(net)

    def update(params, scratch, hits, alpha):
        return ntuple.update(net, params, hits, alpha, scratch, combine)

    return ValueModel(
        num_players=net.num_players,
        num_outputs=net.num_outputs,
        output=net.output,
        init=lambda key: ntuple.init(net),
        init_scratch=init_scratch,
        features=features,
        afterstate_features=afterstate_features,
        value=lambda params, player, idx, action: ntuple.value(net, params, player, idx, action),
        update=update,
        net=net,
        incremental=spec.changes is not None and not game.stochastic,
    )


def linear_model(game: Game, net: linear.LinearNet, feature_set: str) -> ValueModel:
    """A ValueModel over a linear function of hand-made features (`linear.make_features`)."""
    if game.stochastic:
        raise ValueError(f"linear features are for deterministic games, not {game.name!r}")
    features = linear.make_features(game, feature_set)
    return ValueModel(
        num_players=net.num_players,
        num_outputs=net.num_outputs,
        output=net.output,
        init=lambda key: linear.init(net),
        init_scratch=lambda params: jnp.zeros((), jnp.int32),
        features=features,
        afterstate_features=_afterstates_by_features(game, features),
        value=lambda params, player, f, action: linear.value(net, params, player, f, action),
        update=lambda params, scratch, hits, alpha: (
            linear.update(net, params, hits, alpha),
            scratch,
        ),
        net=net,
    )


def cnn_model(game: Game, net: cnn.CNN) -> ValueModel:
    """A ValueModel over a CNN of `observe(state, 0)` planes (optimizer state in the params)."""

    def features(state: State) -> Array:
        return game.observe(state, jnp.int32(0))

    return ValueModel(
        num_players=net.num_players,
        num_outputs=net.num_outputs,
        output=net.output,
        init=lambda key: cnn.init(net, key),
        init_scratch=lambda params: jnp.zeros((), jnp.int32),
        features=features,
        afterstate_features=_afterstates_by_features(game, features),
        value=lambda params, player, f, action: cnn.value(net, params, player, f, action),
        update=lambda params, scratch, hits, alpha: (cnn.update(net, params, hits, alpha), scratch),
        net=net,
    )


__all__ = ["Hits", "ValueModel", "cnn_model", "linear_model", "ntuple_model"]
