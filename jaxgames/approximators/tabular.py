"""Tabular value functions: one table entry per board, indexed by the board in base P.

A table is exactly an n-tuple network with a single tuple covering the whole board and no
symmetries (TicTacToe: 3^9 = 19,683 entries per player), so it reuses `ntuple` for evaluation
and the sparse update.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from jaxgames.approximators import ntuple
from jaxgames.approximators.base import ApproximatorConfig, ValueModel
from jaxgames.core import BoardSpec, Game


@dataclasses.dataclass(frozen=True)
class TabularConfig(ApproximatorConfig):
    """A table over all boards (`approximator: {kind: tabular, ...}`).

    symmetries: read the table on every symmetric copy of the board (sums them).
    output: "tanh" or "identity".
    combine: as for n-tuple networks ("sequential", "weight" or "mean").
    """

    kind: Literal["tabular"] = "tabular"
    symmetries: bool = True
    combine: Literal["sequential", "weight", "mean"] = "sequential"


def make_tabular(
    spec: BoardSpec,
    num_players: int,
    num_outputs: int = 1,
    symmetries: bool = False,
    output: str = "identity",
) -> ntuple.NTupleNet:
    """A table over all boards (raises ValueError if P^cells does not fit int32 indexing)."""
    if spec.num_cell_states**spec.num_cells * num_players * num_outputs >= 2**31:
        raise ValueError(
            f"a table over {spec.num_cell_states}^{spec.num_cells} boards is too large; "
            "use an n-tuple network"
        )
    return ntuple.make_ntuple(
        spec, [list(range(spec.num_cells))], num_players, num_outputs, symmetries, output
    )


def make_model(game: Game, config: TabularConfig, players: int, outputs: int) -> ValueModel:
    """The table of `config` over `game`'s boards."""
    if game.board_spec is None:
        raise ValueError(f"{game!r} has no board description for a table")
    net = make_tabular(game.board_spec, players, outputs, config.symmetries, config.output)
    return ntuple.model(game, net, config.combine)
