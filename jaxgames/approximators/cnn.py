"""Convolutional value / Q networks (flax) over a game's `observe` planes (the capstone report).

    Q(s) = heads(dense(conv(...conv(planes(s)))))       float32[players, outputs]

The planes are `observe(state, 0)`, the first player's point of view; the network has one
output head per player (and per action for Q), so per-player values need no second network
and cost one forward pass. The update is a gradient step through optax on the squared error of
every valid hit, averaged over the hits:

    loss = mean_i 0.5 * (target_i - v_i)^2,   d loss / d pre_i = -signal_i,

where `signal = delta * sigma'(pre)` arrives from the learner (TD, SARSA, Q or the replay-based
Q-learning). The optimizer runs with learning rate 1 and its update is scaled by the schedule's
alpha (exact for SGD and Adam, whose updates are linear in the learning rate).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Literal

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

from jaxgames.approximators.base import (
    OUTPUTS,
    ApproximatorConfig,
    Hits,
    ValueModel,
    afterstates_by_features,
    squash,
    weight_summary,
)
from jaxgames.core import Game
from jaxgames.types import Array

OPTIMIZERS = ("adam", "sgd")


@dataclasses.dataclass(frozen=True)
class CNNConfig(ApproximatorConfig):
    """A CNN over the game's `observe` planes (`approximator: {kind: cnn, ...}`).

    channels: output channels of each 3x3 conv layer.
    hidden: width of the dense layer.
    optimizer: "adam" or "sgd" (optax); the step size is `algorithm.alpha`, a multiplier on
        the optimizer's update at learning rate 1.
    output: "tanh" or "identity".
    """

    kind: Literal["cnn"] = "cnn"
    channels: tuple[int, ...] = (32, 32)
    hidden: int = 64
    optimizer: Literal["adam", "sgd"] = "adam"

    def __post_init__(self):
        super().__post_init__()
        if not self.channels or min(self.channels) < 1 or self.hidden < 1:
            raise ValueError(f"channels={list(self.channels)}, hidden={self.hidden}: expected >= 1")


def patches3x3(x: Array) -> Array:
    """[..., H, W, C] -> [..., H, W, 9 * C]: each cell's 3x3 neighbourhood (zero-padded).

    A 3x3 'SAME' convolution is then one matrix product (`nn.Dense` over the last axis). XLA's
    CPU backend runs convolutions inside a `lax.scan` (the training chunk) through a slow
    generic path, 30x slower than the same convolution outside a loop; matrix products keep
    their fast kernels everywhere, and on GPUs this form costs about the same.
    """
    h, w = x.shape[-3], x.shape[-2]
    pad = [(0, 0)] * (x.ndim - 3) + [(1, 1), (1, 1), (0, 0)]
    padded = jnp.pad(x, pad)
    shifted = [padded[..., i : i + h, j : j + w, :] for i in range(3) for j in range(3)]
    return jnp.concatenate(shifted, axis=-1)


class QNetwork(nn.Module):
    """3x3 conv layers ('SAME' padding, ReLU; see `patches3x3`), one dense ReLU layer,
    linear heads.

    Attributes:
        channels: output channels of each 3x3 conv layer.
        hidden: width of the dense layer.
        num_players, num_outputs: head shape.
    """

    channels: Sequence[int]
    hidden: int
    num_players: int
    num_outputs: int

    @nn.compact
    def __call__(self, planes: Array) -> Array:
        """planes: [..., H, W, C] (any dtype) -> float32[..., players, outputs] (pre-output)."""
        x = planes.astype(jnp.float32)
        for c in self.channels:
            x = nn.relu(nn.Dense(c)(patches3x3(x)))
        x = x.reshape(*x.shape[:-3], -1)
        x = nn.relu(nn.Dense(self.hidden)(x))
        x = nn.Dense(self.num_players * self.num_outputs, kernel_init=nn.initializers.zeros)(x)
        return x.reshape(*x.shape[:-1], self.num_players, self.num_outputs)


@dataclasses.dataclass(frozen=True, eq=False)
class CNN:
    """A CNN approximator's static description (hashes by identity)."""

    module: QNetwork
    planes_shape: tuple[int, ...]
    optimizer: optax.GradientTransformation
    output: str = "tanh"

    @property
    def num_players(self) -> int:
        return self.module.num_players

    @property
    def num_outputs(self) -> int:
        return self.module.num_outputs


def make_cnn(
    planes_shape: tuple[int, ...],
    num_players: int,
    num_outputs: int,
    channels: Sequence[int] = (32, 32),
    hidden: int = 64,
    optimizer: str = "adam",
    output: str = "tanh",
) -> CNN:
    """A CNN over planes of `planes_shape` ([H, W, C]); raises ValueError on bad settings."""
    if len(planes_shape) != 3:
        raise ValueError(f"a CNN needs [H, W, C] planes, got shape {planes_shape}")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer {optimizer!r}; expected one of {', '.join(OPTIMIZERS)}")
    if output not in OUTPUTS:
        raise ValueError(f"output {output!r}; expected one of {OUTPUTS}")
    if not channels or min(channels) < 1 or hidden < 1:
        raise ValueError(f"CNN channels {list(channels)} and hidden {hidden} must be >= 1")
    tx = optax.adam(1.0) if optimizer == "adam" else optax.sgd(1.0)
    module = QNetwork(tuple(channels), hidden, num_players, num_outputs)
    return CNN(module, tuple(planes_shape), tx, output)


def init(net: CNN, key: jax.Array) -> dict:
    """{"net": random weights (zero output heads, so every value starts at 0), "opt": the
    optimizer's state}. The optimizer state lives in the parameters so that checkpoints hold
    it and a resumed run continues exactly."""
    weights = net.module.init(key, jnp.zeros(net.planes_shape, jnp.float32))
    return {"net": weights, "opt": net.optimizer.init(weights)}


def pre_value(net: CNN, params: dict, player: Array, planes: Array, action: Array) -> Array:
    """The head's pre-activation for one board (unbatched)."""
    heads: Array = net.module.apply(params["net"], planes)  # type: ignore[assignment]
    return heads[player, action]


def value(net: CNN, params: dict, player: Array, planes: Array, action: Array) -> Array:
    """sigma(head) for one board (unbatched)."""
    return squash(net.output, pre_value(net, params, player, planes, action))


def update(net: CNN, params: dict, hits: Hits, alpha: Array) -> dict:
    """One optimizer step on the mean squared error of the valid hits."""
    weight = hits.valid.astype(jnp.float32)
    signal = jax.lax.stop_gradient(jnp.where(hits.valid, hits.signal, 0.0))

    def loss(weights):
        pre = jax.vmap(lambda p, f, a: net.module.apply(weights, f)[p, a])(
            hits.player, hits.features, hits.action
        )
        return -jnp.sum(signal * pre) / jnp.maximum(jnp.sum(weight), 1.0)

    weights = params["net"]
    grads = jax.grad(loss)(weights)
    updates, opt = net.optimizer.update(grads, params["opt"], weights)
    weights = jax.tree.map(lambda w, u: w + alpha * u, weights, updates)  # optax updates descend
    return {"net": weights, "opt": opt}


def make_model(game: Game, config: CNNConfig, players: int, outputs: int) -> ValueModel:
    """A CNN over `observe(state, 0)` planes (the optimizer state lives in the params)."""
    planes = jax.eval_shape(game.observe, game.init(jax.random.key(0)), 0).shape
    net = make_cnn(
        planes, players, outputs, config.channels, config.hidden, config.optimizer, config.output
    )

    def features(state) -> Array:
        return game.observe(state, jnp.int32(0))

    def describe(params: dict) -> list[str]:
        return [
            f"conv channels {list(config.channels)}, dense {config.hidden}, "
            f"{config.optimizer}, {players} parameter set(s) x {outputs} output(s), "
            f"output {config.output}",
            weight_summary(params["net"]),
        ]

    return ValueModel(
        num_players=net.num_players,
        num_outputs=net.num_outputs,
        output=net.output,
        init=functools.partial(init, net),
        init_scratch=lambda params: jnp.zeros((), jnp.int32),
        features=features,
        afterstate_features=afterstates_by_features(game, features),
        value=functools.partial(value, net),
        update=lambda params, scratch, hits, alpha: (update(net, params, hits, alpha), scratch),
        describe=describe,
        net=net,
    )
