"""Connect Four on any board: `connect_four` (rows=6, cols=7, connect=4).

Rules: two players drop stones into columns; a stone falls to the lowest empty cell. Whoever
first has `connect` stones in a row (horizontally, vertically or diagonally) wins (+1, the other
-1). A full board without such a row is a draw (0, 0). The action is the column, 0..cols-1; a
full column is illegal. 6 rows x 8 columns is the "FIAR" variant of the FIAR notes.

Cells (6x7 shown), flat index = row * cols + col, row 0 at the bottom::

    row 5 | 35 36 37 38 39 40 41
    row 4 | 28 29 30 31 32 33 34
    row 3 | 21 22 23 24 25 26 27
    row 2 | 14 15 16 17 18 19 20
    row 1 |  7  8  9 10 11 12 13
    row 0 |  0  1  2  3  4  5  6
            c0 c1 c2 c3 c4 c5 c6

`board` is int8[rows, cols]: 0 empty, 1 first player, 2 second player.

For n-tuples a cell has P = 4 states (as in GBG): 0 empty and not yet playable, 1 first
player, 2 second player, 3 empty and playable (bottom row, or a stone directly below). A move
changes at most two cells: the new stone, and the cell above it becoming playable.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxgames import core
from jaxgames.games import grid
from jaxgames.types import Array


@functools.cache
def make_connect_four(rows: int = 6, cols: int = 7, connect: int = 4) -> core.Game:
    """Builds the Connect Four game for a board of `rows` x `cols` and `connect` in a row."""
    num_cells = rows * cols
    table = grid.line_table(rows, cols, connect)
    cell_ids = np.arange(num_cells, dtype=np.int32)

    def init(key: core.PRNGKey | None = None) -> core.State:
        del key
        return core.new_state(jnp.zeros((rows, cols), jnp.int8), jnp.ones(cols, jnp.bool_), 2)

    def apply(state: core.State, action: Array) -> core.State:
        player = state.current_player
        stone = (player + 1).astype(jnp.int8)
        flat = state.board.reshape(num_cells)
        height = jnp.sum(state.board[:, jnp.clip(action, 0, cols - 1)] != 0).astype(jnp.int32)
        cell = height * cols + action
        flat = jnp.where(cell_ids == cell, stone, flat)
        won = grid.wins_through(flat, cell, stone, table)
        terminated = won | (state.step_count + 1 >= num_cells)
        rewards = jnp.where(won, core.win_rewards(player), 0.0)
        return state.replace(
            board=flat.reshape(rows, cols),
            current_player=1 - player,
            legal_action_mask=(flat[num_cells - cols :] == 0) & ~terminated,
            rewards=rewards.astype(jnp.float32),
            terminated=terminated,
            step_count=state.step_count + 1,
        )

    def encode(state: core.State) -> Array:
        board = state.board
        supported = jnp.concatenate([jnp.ones((1, cols), bool), board[:-1] != 0], axis=0)
        cells = jnp.where(board != 0, board, jnp.where(supported, 3, 0))
        return cells.reshape(num_cells).astype(jnp.int32)

    def changes(state: core.State, encoded: Array) -> tuple[Array, Array]:
        del encoded
        height = jnp.sum(state.board != 0, axis=0, dtype=jnp.int32)  # [cols]
        column = jnp.arange(cols, dtype=jnp.int32)
        stone = jnp.where(height < rows, height * cols + column, num_cells)
        above = jnp.where(height + 1 < rows, (height + 1) * cols + column, num_cells)
        new = jnp.stack([jnp.broadcast_to(state.current_player + 1, (cols,)), jnp.full(cols, 3)], 1)
        return jnp.stack([stone, above], axis=1), new.astype(jnp.int32)

    def observe(state: core.State, player: Array) -> Array:
        """bool[rows, cols, 2]: `player`'s stones, then the opponent's."""
        return grid.stone_planes(state.board, player, 2)

    def render(state: core.State) -> str:
        return grid.render_grid(np.asarray(state.board), flip=True)

    perms, forward = grid.grid_symmetries(rows, cols, "mirror")
    board_spec = core.BoardSpec(
        num_cells=num_cells,
        num_cell_states=4,
        encode=encode,
        symmetries=perms,
        action_symmetries=forward[:, (rows - 1) * cols :] - (rows - 1) * cols,
        neighbours=grid.grid_neighbours(rows, cols, diagonal=False),
        changes=changes,
    )
    return core.deterministic_game(
        name="connect_four",
        num_players=2,
        num_actions=cols,
        board_shape=(rows, cols),
        init=init,
        apply=apply,
        observe=observe,
        render=render,
        action_names=tuple(f"column {c}" for c in range(cols)),
        max_moves=num_cells,
        board_spec=board_spec,
    )


def state_from_board(game: core.Game, board) -> core.State:
    """The State of a Connect Four position given as a board (unbatched or batched [B, rows,
    cols]): who is to move follows from the stone counts. Meant for positions in which nobody
    has won yet (the UCI set, opening books); jittable."""
    board = jnp.asarray(board, jnp.int8)
    rows = game.board_shape[0]
    stones = jnp.sum(board != 0, axis=(-2, -1)).astype(jnp.int32)
    batch = board.shape[:-2]
    return core.State(
        board=board,
        current_player=stones % 2,
        legal_action_mask=board[..., rows - 1, :] == 0,
        rewards=jnp.zeros((*batch, 2), jnp.float32),
        terminated=jnp.zeros(batch, bool),
        step_count=stones,
    )
