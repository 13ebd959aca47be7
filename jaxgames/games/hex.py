"""Hex on an n x n rhombus: `hex` (size=6, any size from 2 to 13).

Rules: two players alternately place a stone on an empty cell. The first player (X) wins by
joining the top and bottom rows with a chain of adjacent stones, the second player (O) by
joining the left and right columns (+1 for the winner, -1 for the other). Hex has no draws:
a full board always holds exactly one winning chain. No swap rule. The action is the cell
index; an occupied cell is illegal.

Cells (4x4 shown), flat index = row * size + col; each row is shifted half a cell to the right
of the one above, so cell (r, c) touches (r-1, c), (r-1, c+1), (r, c-1), (r, c+1), (r+1, c-1)
and (r+1, c)::

    X edge:   0   1   2   3
               4   5   6   7        O edges: left (column 0) and right (column size - 1)
                8   9  10  11
                 12  13  14  15
    X edge (bottom row)

`board` is int8[size, size]: 0 empty, 1 first player, 2 second player.

Win detection keeps the connected groups in the state instead of searching the board: every
stone carries its group's label in `extras["group"]`: the owner's first edge (label `cells`)
for a group that touches it, else its second edge (`cells + 1`) for one touching that, else
the index of one of its cells (the edges act as two virtual stones of each player). A new
stone merges the groups of its same-coloured neighbours under one label (one vectorised
relabelling of the board, no search); the mover wins when it joins both edge labels.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxgames import core
from jaxgames.games import grid
from jaxgames.types import Array

LABEL = jnp.int16  # group labels: a cell index, or one of the two edges (cells, cells + 1)
HEX_STEPS = ((-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0))


def hex_neighbours(size: int) -> np.ndarray:
    """int32[cells, 6]: the adjacent cells of each cell (-1 where there are fewer)."""
    return grid.neighbours_by_steps(size, size, HEX_STEPS)


@functools.cache
def make_hex(size: int = 6) -> core.Game:
    """Builds Hex on a `size` x `size` board."""
    cells = size * size
    ids = np.arange(cells, dtype=np.int32)
    near = hex_neighbours(size)
    padded_near = np.where(near < 0, cells, near)  # index `cells` is an always-empty pad
    row, col = ids // size, ids % size
    # edges[p, cell] = (touches p's first edge, touches p's second edge)
    edges = np.stack(
        [
            np.stack([row == 0, row == size - 1], axis=-1),
            np.stack([col == 0, col == size - 1], axis=-1),
        ]
    )

    first_edge, second_edge = cells, cells + 1  # the labels of the mover's two edges

    def init(key: core.PRNGKey | None = None) -> core.State:
        del key
        state = core.new_state(jnp.zeros((size, size), jnp.int8), jnp.ones(cells, bool), 2)
        return state.replace(extras={"group": jnp.asarray(ids, LABEL)})

    def apply(state: core.State, action: Array) -> core.State:
        player = state.current_player
        stone = (player + 1).astype(jnp.int8)
        cell = jnp.clip(action, 0, cells - 1)
        flat = jnp.where(ids == cell, stone, state.board.reshape(cells))
        group = state.extras["group"]
        nb = jnp.asarray(padded_near)[cell]  # [6]
        same = jnp.concatenate([flat, jnp.zeros(1, jnp.int8)])[nb] == stone
        labels = jnp.where(same, jnp.concatenate([group, jnp.full(1, -1, LABEL)])[nb], -1)
        on_edge = jnp.asarray(edges)[player, cell]
        first = on_edge[0] | jnp.any(labels == first_edge)
        second = on_edge[1] | jnp.any(labels == second_edge)
        won = first & second
        label = jnp.where(first, first_edge, jnp.where(second, second_edge, cell)).astype(LABEL)
        merge = ((group[:, None] == labels[None, :]).any(-1) & (flat == stone)) | (ids == cell)
        return state.replace(
            board=flat.reshape(size, size),
            current_player=1 - player,
            legal_action_mask=(flat == 0) & ~won,
            rewards=jnp.where(won, core.win_rewards(player), 0.0).astype(jnp.float32),
            terminated=won,
            step_count=state.step_count + 1,
            extras={"group": jnp.where(merge, label, group)},
        )

    def encode(state: core.State) -> Array:
        return state.board.reshape(cells).astype(jnp.int32)

    def changes(state: core.State, encoded: Array) -> tuple[Array, Array]:
        del encoded
        new = jnp.broadcast_to(state.current_player + 1, (cells, 1)).astype(jnp.int32)
        return jnp.asarray(ids)[:, None], new

    def observe(state: core.State, player: Array) -> Array:
        """bool[size, size, 2]: `player`'s stones, then the opponent's."""
        return grid.stone_planes(state.board, player, 2)

    def render(state: core.State) -> str:
        board = np.asarray(state.board)
        lines = [" " * r + " ".join(".XO"[int(v)] for v in board[r]) for r in range(size)]
        return "\n".join(lines)

    perms, forward = grid.grid_symmetries(size, size, "rotate180")
    board_spec = core.BoardSpec(
        num_cells=cells,
        num_cell_states=3,
        encode=encode,
        symmetries=perms,
        action_symmetries=forward,
        neighbours=near,
        changes=changes,
    )
    return core.deterministic_game(
        name="hex",
        num_players=2,
        num_actions=cells,
        board_shape=(size, size),
        init=init,
        apply=apply,
        observe=observe,
        render=render,
        action_names=tuple(f"row {r} col {c}" for r in range(size) for c in range(size)),
        max_moves=cells,
        board_spec=board_spec,
    )
