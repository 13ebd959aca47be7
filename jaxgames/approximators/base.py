"""The approximator contract: `ValueModel`, the update requests `Hits`, and the registry.

A ValueModel binds an approximator to a game. Learners only call its functions, so TD, SARSA
and Q-learning combine with every approximator by configuration:

* `features(state)` turns a state into what the approximator reads (n-tuples: LUT indices);
* `afterstate_features(state, features)` gives the features of every action's afterstate,
  [num_actions, ...], incrementally where the game allows it;
* `value(params, player, features, action)` is V_p (value heads) or Q_p(., action) (Q heads),
  and `q_values(params, player, features)` all of a state's Q_p(., a) at once;
* `update(params, scratch, hits, alpha)` moves the values of the boards in `hits` by their
  signals (delta * sigma'(v) * lambda^k) and returns the scratch space it needs between calls;
* `describe(params)` says what the approximator is and what its parameters hold, for people.

An approximator is a module with a settings type (a frozen dataclass whose `kind` field names
it; what `approximator:` in a preset loads) and a `make_model(game, config, num_players,
num_outputs) -> ValueModel`; `register_approximator` makes it available by its kind.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import jax
import jax.numpy as jnp

from jaxgames.core import Game, State
from jaxgames.types import Array, ArrayLike, Features, Params, PRNGKey, check_choices

OUTPUTS = ("tanh", "identity")


def squash(output: str, x: Array) -> Array:
    """sigma(x): tanh, or the identity for unbounded scores (2048)."""
    return jnp.tanh(x) if output == "tanh" else x


def derivative(output: str, value: Array) -> Array:
    """sigma'(x) expressed through the value v = sigma(x): 1 - v^2 for tanh, else 1."""
    return 1.0 - value * value if output == "tanh" else jnp.ones_like(value)


class Hits(NamedTuple):
    """M update requests, each for everything one board's value depends on.

    Attributes:
        player: int32[M], whose parameters.
        action: int32[M], the Q output (0 for value networks).
        features: [M, ...] the boards' features (for n-tuples: int32[M, TS] `indices`).
        signal: float32[M], the recommended change before step size: delta * sigma' * lambda^k.
        valid: bool[M]; invalid rows change nothing.
        gain: float32[M] or None (= 1): the share of its error that one request, alone and at
            step size 1, removes from its own board's output: sigma'(v)^2 (times lambda^k for
            an eligibility row). The n-tuple update's "sequential" combine uses it.
        lead: int32[M] or None (= 0): the offset (<= 0) from a request to the request whose
            update it is part of: 0 for a board's own request, -k for the k-th board of its
            eligibility history, which moves with the same delta in the same sequential
            update and so shares that board's combine scale.
    """

    player: Array
    action: Array
    features: Array
    signal: Array
    valid: Array
    gain: Array | None = None
    lead: Array | None = None


@dataclasses.dataclass(frozen=True)
class ApproximatorConfig:
    """Settings every approximator has; each kind extends it with its own (see its module).

    kind: which approximator (the registry key).
    output: "tanh" or "identity", the squashing of the value.
    """

    kind: str = ""
    output: Literal["tanh", "identity"] = "tanh"

    def __post_init__(self):
        check_choices(self)


@dataclasses.dataclass(frozen=True, eq=False)
class ValueModel:
    """An approximator bound to a game (static; hashes by identity).

    Attributes:
        num_players: parameter sets by player.
        num_outputs: 1 for a value head over afterstates, num_actions for a Q head.
        output: "tanh" or "identity", the squashing of the value.
        init: `init(key) -> params`.
        init_scratch: `init_scratch(params) -> scratch` (state `update` keeps between calls;
            checkpoints do not save it, so no update may depend on the scratch it starts from).
        features: `features(state) -> F` (unbatched).
        afterstate_features: `afterstate_features(state, F) -> F[num_actions]` (unbatched).
        value: `value(params, player, F, action) -> float32`.
        update: `update(params, scratch, hits, alpha) -> (params, scratch)`, batched over hits.
        describe: `describe(params) -> list[str]`, lines for `jaxgames inspect`.
        incremental: `afterstate_features` is cheaper than `features` of every afterstate.
        net: the underlying static description (e.g. an NTupleNet), for analysis code.
    """

    num_players: int
    num_outputs: int
    output: str
    init: Callable[[PRNGKey], Params]
    init_scratch: Callable[[Params], Any]
    features: Callable[[State], Features]
    afterstate_features: Callable[[State, Features], Features]
    value: Callable[[Params, ArrayLike, Features, ArrayLike], Array]
    update: Callable[[Params, Any, Hits, Array], tuple[Params, Any]]
    describe: Callable[[Params], list[str]]
    incremental: bool = False
    net: Any = None

    def derivative(self, value: Array) -> Array:
        """sigma'(x) expressed through the value v = sigma(x): 1 - v^2 for tanh, else 1."""
        return derivative(self.output, value)

    def q_values(self, params: Params, player: ArrayLike, features: Features) -> Array:
        """float32[num_outputs]: every output's value of one state for `player` (unbatched)."""
        actions = jnp.arange(self.num_outputs)
        return jax.vmap(lambda a: self.value(params, player, features, a))(actions)

    def abstract_params(self) -> Any:
        """The shapes and dtypes of `init`'s parameters, without allocating them."""
        return jax.eval_shape(self.init, jax.random.key(0))


def afterstates_by_features(game: Game, features: Callable[[State], Features]):
    """`afterstate_features` computed from every afterstate (for feature maps that are not
    incremental)."""
    actions = jnp.arange(game.num_actions)

    def afterstate_features(state: State, current: Features) -> Features:
        del current
        after = jax.vmap(game.afterstate, in_axes=(None, 0))(state, actions)
        return jax.vmap(features)(after)

    return afterstate_features


@dataclasses.dataclass(frozen=True)
class ApproximatorDef:
    """A registered approximator: its settings type and how to build it for a game.

    Attributes:
        config_type: the frozen dataclass `approximator:` loads for this kind.
        make_model: `make_model(game, config, num_players, num_outputs) -> ValueModel`;
            raises ValueError when the settings do not fit the game.
    """

    config_type: type[ApproximatorConfig]
    make_model: Callable[[Game, Any, int, int], ValueModel]


APPROXIMATORS: dict[str, ApproximatorDef] = {}


def register_approximator(
    kind: str,
    config_type: type[ApproximatorConfig],
    make_model: Callable[[Game, Any, int, int], ValueModel],
) -> None:
    """Makes an approximator available as `approximator: {kind: KIND, ...}`."""
    APPROXIMATORS[kind] = ApproximatorDef(config_type, make_model)


def make_model(game: Game, config: ApproximatorConfig, players: int, outputs: int) -> ValueModel:
    """The approximator of `config` bound to `game`, with `players` parameter sets of
    `outputs` outputs each."""
    if config.kind not in APPROXIMATORS:
        raise ValueError(
            f"approximator kind {config.kind!r}; expected one of {', '.join(APPROXIMATORS)}"
        )
    return APPROXIMATORS[config.kind].make_model(game, config, players, outputs)


def weight_summary(params: Any) -> str:
    """'N weights; non-zero X%; mean |w| M' over every array of a parameter pytree."""
    import numpy as np

    leaves = [np.ravel(np.asarray(x)) for x in jax.tree.leaves(params)]
    weights = np.concatenate(leaves) if leaves else np.zeros(0)
    return (
        f"{weights.size:,} weights; non-zero {np.mean(weights != 0):.2%}; "
        f"mean |w| {np.abs(weights).mean():.4g}"
    )
