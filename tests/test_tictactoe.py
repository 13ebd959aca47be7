"""TicTacToe rules on hand-drawn positions (row 0 at the top, cell = row * 3 + col)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from tests.helpers import ascii_board, play

TTT = jaxgames.make("tictactoe")

CASES = {
    "row": (
        [0, 3, 1, 4, 2],
        """
        X X X
        O O .
        . . .
    """,
        [1, -1],
    ),
    "column, second player": (
        [0, 2, 3, 5, 7, 8],
        """
        X . O
        X . O
        . X O
    """,
        [-1, 1],
    ),
    "main diagonal, last mark in the middle": (
        [0, 1, 8, 2, 4],
        """
        X O O
        . X .
        . . X
    """,
        [1, -1],
    ),
    "anti diagonal": (
        [2, 0, 4, 1, 6],
        """
        O O X
        . X .
        X . .
    """,
        [1, -1],
    ),
    "win on the last cell": (
        [0, 1, 2, 4, 3, 5, 7, 6, 8],
        """
        X O X
        X O O
        O X X
    """,
        [0, 0],
    ),
    "full board win beats draw": (
        [0, 1, 2, 3, 4, 5, 7, 6, 8],
        """
        X O X
        O X O
        O X X
    """,
        [1, -1],
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_positions(case):
    moves, drawing, rewards = CASES[case]
    state = play(TTT, moves)
    np.testing.assert_array_equal(state.board, ascii_board(drawing))
    np.testing.assert_array_equal(state.rewards, rewards)
    assert bool(state.terminated)
    assert not bool(jnp.any(state.legal_action_mask))


def test_mask_marks_empty_cells_and_occupied_cells_forfeit():
    state = play(TTT, [4, 0])
    np.testing.assert_array_equal(state.legal_action_mask, [0, 1, 1, 1, 0, 1, 1, 1, 1])
    with pytest.raises(ValueError, match=r"action 4 is not legal"):
        play(TTT, [4, 0, 4])
    forfeit = TTT.step(state, jnp.int32(0), None)
    np.testing.assert_array_equal(forfeit.rewards, [-1, 1])
    np.testing.assert_array_equal(forfeit.board, state.board)
    assert bool(forfeit.terminated)


def test_checked_step_rejects_finished_games_and_batches():
    state = play(TTT, [0, 3, 1, 4, 2])
    with pytest.raises(ValueError, match="game is over"):
        jaxgames.checked_step(TTT, state, 5)
    two = jax.tree.map(lambda x: jnp.stack([x, x]), TTT.init(None))
    with pytest.raises(ValueError, match="unbatched"):
        jaxgames.checked_step(TTT, two, 5)
    with pytest.raises(ValueError, match="must be an integer"):
        jaxgames.checked_step(TTT, TTT.init(None), 1.5)
