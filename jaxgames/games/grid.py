"""Helpers for games on a rectangular grid: win lines, symmetries, neighbourhoods, drawing.

Cells are numbered `row * cols + col`. Checking only the lines through the newly placed stone
is enough to detect a win, so each game precomputes, for every cell, the cells at offsets
-(k-1)..(k-1) along the four directions (horizontal, vertical, two diagonals). Off-board
neighbours get the index `rows * cols`, which `jnp.take(..., mode="fill")` reads as empty.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))  # (d_row, d_col)


def line_table(rows: int, cols: int, connect: int) -> np.ndarray:
    """Cells along the four lines through each cell.

    Returns:
        int32[rows * cols, 4, 2 * connect - 1]: entry `[c, d, j]` is the flat index
        (`row * cols + col`) of the cell at offset `j - (connect - 1)` from cell `c` along
        direction `d`, or `rows * cols` where that is off the board.
    """
    table = np.full((rows * cols, len(DIRECTIONS), 2 * connect - 1), rows * cols, np.int32)
    for r in range(rows):
        for c in range(cols):
            for d, (dr, dc) in enumerate(DIRECTIONS):
                for j, off in enumerate(range(-(connect - 1), connect)):
                    rr, cc = r + off * dr, c + off * dc
                    if 0 <= rr < rows and 0 <= cc < cols:
                        table[r * cols + c, d, j] = rr * cols + cc
    return table


def wins_through(flat_board: jax.Array, cell: jax.Array, stone: jax.Array, table: np.ndarray):
    """Whether the stone at `cell` completes `connect` in a row (unbatched).

    Args:
        flat_board: int8[rows * cols], the board after the stone was placed.
        cell: int32 scalar, the flat index of the new stone.
        stone: int8 scalar, the value of the new stone.
        table: the `line_table` of this board.

    Returns:
        bool scalar.
    """
    connect = (table.shape[-1] + 1) // 2
    segment = jnp.take(flat_board, jnp.asarray(table)[cell], mode="fill", fill_value=0) == stone
    windows = [jnp.all(segment[:, i : i + connect], axis=-1) for i in range(connect)]
    return jnp.any(jnp.stack(windows))


def stone_planes(board: jax.Array, player: jax.Array, num_players: int) -> jax.Array:
    """bool[*board.shape, num_players]: plane i marks the stones of player (player + i) % N."""
    owners = (jnp.asarray(player, jnp.int32) + jnp.arange(num_players)) % num_players + 1
    return board[..., None] == owners.astype(board.dtype)


def render_grid(board: np.ndarray, symbols: str = ".XO", flip: bool = False) -> str:
    """ASCII picture of a 2-D board with column numbers beneath; `flip` puts row 0 at the bottom."""
    rows = board[::-1] if flip else board
    lines = [" ".join(symbols[int(v)] for v in row) for row in rows]
    lines.append(" ".join(str(c % 10) for c in range(board.shape[1])))
    return "\n".join(lines)


def grid_symmetries(rows: int, cols: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Cell permutations of a grid's symmetry group, and how cell actions map under them.

    Args:
        kind: "mirror" (identity and left-right reflection), "dihedral" (the 8 rotations and
            reflections of a square) or "rotate180" (identity and half turn).

    Returns:
        (perms int32[S, cells], inverse int32[S, cells]): symmetric board s holds at cell i
        what the board holds at `perms[s, i]`; a stone on cell a lands on `inverse[s, a]`.
    """
    transforms = {
        "mirror": [lambda r, c: (r, c), lambda r, c: (r, cols - 1 - c)],
        "rotate180": [lambda r, c: (r, c), lambda r, c: (rows - 1 - r, cols - 1 - c)],
        "dihedral": [
            lambda r, c: (r, c),
            lambda r, c: (c, rows - 1 - r),
            lambda r, c: (rows - 1 - r, cols - 1 - c),
            lambda r, c: (cols - 1 - c, r),
            lambda r, c: (r, cols - 1 - c),
            lambda r, c: (rows - 1 - r, c),
            lambda r, c: (c, r),
            lambda r, c: (cols - 1 - c, rows - 1 - r),
        ],
    }[kind]
    if kind == "dihedral" and rows != cols:
        raise ValueError(f"dihedral symmetries need a square board, got {rows}x{cols}")
    forward = np.array(
        [
            [f(r, c)[0] * cols + f(r, c)[1] for r in range(rows) for c in range(cols)]
            for f in transforms
        ],
        np.int32,
    )  # forward[s, a]: where cell a goes
    perms = np.argsort(forward, axis=1).astype(np.int32)
    return perms, forward


def grid_neighbours(rows: int, cols: int, diagonal: bool) -> np.ndarray:
    """int32[cells, 8 or 4]: the adjacent cells of each cell (-1 where there are fewer)."""
    steps = [(-1, 0), (1, 0), (0, -1), (0, 1)]
    if diagonal:
        steps += [(-1, -1), (-1, 1), (1, -1), (1, 1)]
    return neighbours_by_steps(rows, cols, steps)


def neighbours_by_steps(rows: int, cols: int, steps) -> np.ndarray:
    """int32[cells, len(steps)]: the cells at the given (row, col) offsets from each cell
    that lie on the board, packed first (-1 where there are fewer)."""
    out = np.full((rows * cols, len(steps)), -1, np.int32)
    for r in range(rows):
        for c in range(cols):
            near = [
                (r + dr) * cols + c + dc
                for dr, dc in steps
                if 0 <= r + dr < rows and 0 <= c + dc < cols
            ]
            out[r * cols + c, : len(near)] = near
    return out
