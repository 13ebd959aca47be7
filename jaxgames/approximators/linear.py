"""Linear value functions over hand-made board features (the FIAR notes).

    value_p(s, a) = sigma(w[p, a] . phi(s))            w: float32[players, outputs, F]

With `outputs = num_actions` this is the FIAR notes' Q form, one weight vector per action (its "one
level decision tree"); with `outputs = 1` it is a value head over afterstates for TD.

Feature sets (`phi`, float32[F], unbatched):

* `raw` (any game with a board description): one-hot cell states (num_cells x P) and a bias.
* `fiar` (Connect Four of any size, the FIAR notes): from the first player's point of view,
  1. raw cells: +1 first player, -1 second player, 0 empty (rows x cols);
  2. per player and column (2 x 3 x cols), with L the cell where a stone dropped into the
     column lands (the column's top unused row) and T the column's top stone (its top used
     row): "completes 3 in the top used row" (T is the player's stone and lies in an open
     window with three of the player's stones: a window of `connect` cells holding
     `connect - 1` of the player's stones and none of the opponent's), "completes 3 in the top
     unused row" (a stone of the player at L would make such an open three) and "completes 4
     in the top unused row" (a stone of the player at L completes `connect`: for the mover a
     win, for the opponent the threat the mover must block);
  3. zugzwang parity (Allis 1988), one per player: the player has a threat (an empty cell that
     completes `connect`) on a row of its parity: odd rows counted from 1 at the bottom for the
     first player, even rows for the second;
  4. a bias (1.0).
  The FIAR notes writes the features from the mover's point of view ("own" / "opponent") and keeps
  separate weights per role; with separate weights per player the fixed point of view used here
  is the same model (the two differ by a sign flip of the raw cells and a swap of the
  per-player features, which a player's own weights absorb) and one feature vector serves
  afterstates (TD) and states (SARSA/Q) alike.

The update is the semi-gradient step on w[p, a] for every hit; `combine` says how several hits
on one weight vector in one lockstep step combine: summed ("sequential") or averaged ("mean",
minibatch SGD; the right choice when B games share a handful of weight vectors).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.approximators.base import (
    OUTPUTS,
    ApproximatorConfig,
    Hits,
    ValueModel,
    afterstates_by_features,
    squash,
    weight_summary,
)
from jaxgames.core import Game, State
from jaxgames.types import Array, PRNGKey

FEATURE_SETS = ("raw", "fiar")


@dataclasses.dataclass(frozen=True)
class LinearConfig(ApproximatorConfig):
    """A linear function of hand-made features (`approximator: {kind: linear, ...}`).

    features: "raw" (one-hot cells, any game) or "fiar" (the four-in-a-row features of the
        linear SARSA notes, Connect Four of any size).
    output: "tanh" (the value is tanh of the weighted sum, bounded like the rewards) or
        "identity" (the weighted sum itself: a linear model in the strict sense).
    combine: how several games' hits on one weight vector in one lockstep step combine:
        summed ("sequential") or averaged ("mean", minibatch SGD: with B games sharing a few
        weight vectors, each transition then moves them by about alpha / (B / vectors)).
    """

    kind: Literal["linear"] = "linear"
    features: Literal["raw", "fiar"] = "raw"
    combine: Literal["sequential", "mean"] = "sequential"


def _windows(rows: int, cols: int, connect: int) -> np.ndarray:
    """int32[W, connect]: flat cells of every line of `connect` cells on the board."""
    out = []
    for r in range(rows):
        for c in range(cols):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + k * dr, c + k * dc) for k in range(connect)]
                if all(0 <= rr < rows and 0 <= cc < cols for rr, cc in cells):
                    out.append([rr * cols + cc for rr, cc in cells])
    return np.asarray(out, np.int32).reshape(-1, connect)


def fiar_features(rows: int, cols: int, connect: int):
    """`phi(board) -> float32[rows*cols + 6*cols + 3]` for a Connect Four board (unbatched)."""
    windows = _windows(rows, cols, connect)
    num_windows, num_cells = len(windows), rows * cols
    members = [[w for w in range(num_windows) if cell in windows[w]] for cell in range(num_cells)]
    width = max(1, max(len(m) for m in members))
    # Padding points at an extra window that never counts (its stone counts are set to -1).
    cell_windows = np.full((num_cells, width), num_windows, np.int32)
    for cell, m in enumerate(members):
        cell_windows[cell, : len(m)] = m
    row_of = np.arange(num_cells) // cols
    parity = np.stack([row_of % 2 == 0, row_of % 2 == 1])  # [2, cells]: rows 1, 3, 5 / 2, 4, 6
    columns = np.arange(cols)

    def phi(board: Array) -> Array:
        flat = board.reshape(num_cells)
        stones = jnp.stack([flat == 1, flat == 2]).astype(jnp.int32)  # [2, cells]
        count = jnp.sum(stones[:, windows], axis=-1)  # [2, W]
        count = jnp.concatenate([count, jnp.full((2, 1), -1, jnp.int32)], axis=1)
        free = count[::-1] == 0  # the opponent has no stone in the window
        free = free.at[:, num_windows].set(False)
        # For an empty cell x: would a stone of p at x make connect - 1 / connect of p's
        # stones in an open window?
        three = jnp.any(((count == connect - 2) & free)[:, cell_windows], axis=-1)  # [2, cells]
        four = jnp.any(((count == connect - 1) & free)[:, cell_windows], axis=-1)
        empty = flat == 0
        height = jnp.sum(board != 0, axis=0, dtype=jnp.int32)  # [cols]
        land, top = height * cols + columns, (height - 1) * cols + columns
        land_ok, top_ok = height < rows, height > 0

        def at(table, cells, ok):
            return jnp.where(ok, table[:, jnp.clip(cells, 0, num_cells - 1)], False)

        # At an occupied cell, `four` says: the cell's stone is p's and sits in an open window
        # with connect - 1 of p's stones (an open three for connect = 4).
        potentials = jnp.stack(
            [at(four, top, top_ok), at(three, land, land_ok), at(four, land, land_ok)], axis=1
        )  # [2 players, 3, cols]
        zugzwang = jnp.any(four & empty & parity, axis=-1)  # [2]
        raw = stones[0] - stones[1]
        return jnp.concatenate(
            [
                raw.astype(jnp.float32),
                potentials.reshape(-1).astype(jnp.float32),
                zugzwang.astype(jnp.float32),
                jnp.ones(1, jnp.float32),
            ]
        )

    return phi


def num_features(game: Game, feature_set: str) -> int:
    """F for this game and feature set."""
    if feature_set == "fiar":
        rows, cols = game.board_shape
        return rows * cols + 6 * cols + 3
    spec = game.board_spec
    return spec.num_cells * spec.num_cell_states + 1


def make_features(game: Game, feature_set: str):
    """`phi(state) -> float32[F]` (unbatched); raises ValueError for an unknown set or a game
    the set does not describe."""
    if feature_set not in FEATURE_SETS:
        raise ValueError(
            f"linear feature set {feature_set!r}; expected one of {', '.join(FEATURE_SETS)}"
        )
    if feature_set == "fiar":
        if game.name != "connect_four":
            raise ValueError(
                f"the 'fiar' features describe Connect Four boards, not {game.name!r}; "
                "use features: raw"
            )
        options = dict(game.options)
        phi = fiar_features(options["rows"], options["cols"], options["connect"])
        return lambda state: phi(state.board)
    spec = game.board_spec
    if spec is None:
        raise ValueError(f"{game.name!r} has no board description for linear features")
    states = jnp.arange(spec.num_cell_states)

    def raw(state: State) -> Array:
        onehot = spec.encode(state)[:, None] == states
        return jnp.concatenate([onehot.reshape(-1).astype(jnp.float32), jnp.ones(1, jnp.float32)])

    return raw


@dataclasses.dataclass(frozen=True, eq=False)
class LinearNet:
    """Static shape of a linear approximator (hashes by identity)."""

    num_players: int
    num_outputs: int
    num_features: int
    output: str = "tanh"
    combine: str = "mean"

    def __post_init__(self):
        if self.output not in OUTPUTS:
            raise ValueError(f"output {self.output!r}; expected one of {OUTPUTS}")
        if self.combine not in ("sequential", "mean"):
            raise ValueError(f"combine {self.combine!r}; expected 'sequential' or 'mean'")


def init(net: LinearNet) -> dict:
    """Zero weights: float32[players, outputs, F]."""
    return {"w": jnp.zeros((net.num_players, net.num_outputs, net.num_features), jnp.float32)}


def value(net: LinearNet, params: dict, player: Array, features: Array, action: Array) -> Array:
    """sigma(w[player, action] . features) (unbatched)."""
    return squash(net.output, jnp.dot(params["w"][player, action], features))


def update(net: LinearNet, params: dict, hits: Hits, alpha: Array) -> dict:
    """w[p, a] += alpha * signal * phi for every valid hit (semi-gradient; `signal` already
    holds delta * sigma'), summed or averaged per weight vector as `net.combine` says."""
    signal = jnp.where(hits.valid, hits.signal, 0.0)
    slot = hits.player * net.num_outputs + hits.action
    size = net.num_players * net.num_outputs
    step = jax.ops.segment_sum(signal[:, None] * hits.features, slot, num_segments=size)
    if net.combine == "mean":
        count = jax.ops.segment_sum(hits.valid.astype(jnp.float32), slot, num_segments=size)
        step = step / jnp.maximum(count, 1.0)[:, None]
    w = params["w"] + alpha * step.reshape(params["w"].shape)
    return {"w": w}


def make_model(game: Game, config: LinearConfig, players: int, outputs: int) -> ValueModel:
    """A linear model over `config.features` of `game`'s states."""
    if game.stochastic:
        raise ValueError(f"linear features are for deterministic games, not {game.name!r}")
    net = LinearNet(
        players, outputs, num_features(game, config.features), config.output, config.combine
    )
    features = make_features(game, config.features)

    def init_model(key: PRNGKey) -> dict:
        del key
        return init(net)

    def describe(params: dict) -> list[str]:
        return [
            f"'{config.features}' features ({net.num_features}), combine {net.combine}, "
            f"{net.num_players} parameter set(s) x {net.num_outputs} output(s), "
            f"output {net.output}",
            weight_summary(params),
        ]

    return ValueModel(
        num_players=net.num_players,
        num_outputs=net.num_outputs,
        output=net.output,
        init=init_model,
        init_scratch=lambda params: jnp.zeros((), jnp.int32),
        features=features,
        afterstate_features=afterstates_by_features(game, features),
        value=functools.partial(value, net),
        update=lambda params, scratch, hits, alpha: (update(net, params, hits, alpha), scratch),
        describe=describe,
        net=net,
    )
