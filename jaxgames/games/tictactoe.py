"""TicTacToe: `tictactoe` (no options).

Rules: two players alternately mark an empty cell of a 3x3 grid; three in a row (horizontal,
vertical or diagonal) wins (+1, the other -1); a full grid without one is a draw (0, 0). The
action is the cell index; an occupied cell is illegal.

Cells, flat index = row * 3 + col, row 0 at the top::

     0 | 1 | 2
    ---+---+---
     3 | 4 | 5
    ---+---+---
     6 | 7 | 8

`board` is int8[3, 3]: 0 empty, 1 first player (X), 2 second player (O).
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxgames import core
from jaxgames.games import grid
from jaxgames.types import Array

_CELLS = np.arange(9, dtype=np.int32)


def _wins_through(marks: Array, cell: Array) -> Array:
    """Whether the mark at `cell` completes a line: its row, its column, and a diagonal only
    if the cell lies on it. On 3x3, static slices are cheaper than gathering the lines.

    Args:
        marks: bool[3, 3], the mover's marks including the new one.
        cell: int32, the new mark's flat index.
    """
    r, c = cell // 3, cell % 3
    row = jnp.any(jnp.all(marks, axis=1) & (jnp.arange(3) == r))
    col = jnp.any(jnp.all(marks, axis=0) & (jnp.arange(3) == c))
    diag = jnp.all(jnp.diagonal(marks)) & (r == c)
    anti = jnp.all(jnp.diagonal(marks[:, ::-1])) & (r + c == 2)
    return row | col | diag | anti


def _init(key: core.PRNGKey | None = None) -> core.State:
    del key
    return core.new_state(jnp.zeros((3, 3), jnp.int8), jnp.ones(9, jnp.bool_), 2)


def _apply(state: core.State, action: Array) -> core.State:
    player = state.current_player
    stone = (player + 1).astype(jnp.int8)
    flat = jnp.where(action == _CELLS, stone, state.board.reshape(9))
    won = _wins_through((flat == stone).reshape(3, 3), action)
    terminated = won | (state.step_count + 1 >= 9)
    rewards = jnp.where(won, core.win_rewards(player), 0.0)
    return state.replace(
        board=flat.reshape(3, 3),
        current_player=1 - player,
        legal_action_mask=(flat == 0) & ~terminated,
        rewards=rewards.astype(jnp.float32),
        terminated=terminated,
        step_count=state.step_count + 1,
    )


def _encode(state: core.State) -> Array:
    """int32[9] cell states for n-tuples: 0 empty, 1 X, 2 O (P = 3)."""
    return state.board.reshape(9).astype(jnp.int32)


def _changes(state: core.State, encoded: Array) -> tuple[Array, Array]:
    """Each action marks its own cell with the mover's stone."""
    del encoded
    stone = jnp.broadcast_to(state.current_player + 1, (9, 1)).astype(jnp.int32)
    return jnp.arange(9, dtype=jnp.int32)[:, None], stone


def _observe(state: core.State, player: Array) -> Array:
    """bool[3, 3, 2]: `player`'s marks, then the opponent's."""
    return grid.stone_planes(state.board, player, 2)


def _render(state: core.State) -> str:
    """The grid with X and O, and the number of each empty cell (the move that takes it)."""
    cells = np.asarray(state.board).reshape(9)
    marks = [".XO"[v] if v else str(i) for i, v in enumerate(cells)]
    return "\n".join(" ".join(marks[r * 3 : r * 3 + 3]) for r in range(3))


@functools.cache
def make_tictactoe() -> core.Game:
    """Builds the TicTacToe game."""
    perms, forward = grid.grid_symmetries(3, 3, "dihedral")
    board_spec = core.BoardSpec(
        num_cells=9,
        num_cell_states=3,
        encode=_encode,
        symmetries=perms,
        action_symmetries=forward,
        neighbours=grid.grid_neighbours(3, 3, diagonal=True),
        changes=_changes,
    )
    return core.deterministic_game(
        name="tictactoe",
        num_players=2,
        num_actions=9,
        board_shape=(3, 3),
        init=_init,
        apply=_apply,
        observe=_observe,
        render=_render,
        action_names=tuple(f"cell {a} (row {a // 3} col {a % 3})" for a in range(9)),
        max_moves=9,
        board_spec=board_spec,
    )
