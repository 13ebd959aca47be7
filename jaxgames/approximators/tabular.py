"""Tabular value functions: one table entry per board, indexed by the board in base P.

A table is exactly an n-tuple network with a single tuple covering the whole board and no
symmetries (TicTacToe: 3^9 = 19,683 entries per player), so it reuses `ntuple` for evaluation
and the sparse update.
"""

from __future__ import annotations

from jaxgames.approximators import ntuple
from jaxgames.core import BoardSpec


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
