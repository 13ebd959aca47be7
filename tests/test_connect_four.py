"""Connect Four rules on hand-drawn positions (6x7 standard, 6x8 FIAR, other sizes).

Boards are drawn top row first, as a person sees them; row 0 is the bottom line.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from tests.helpers import ascii_board, play

C4 = jaxgames.make("connect_four")
FIAR = jaxgames.make("connect_four", rows=6, cols=8)
X_WINS, O_WINS, NO_RESULT = [1.0, -1.0], [-1.0, 1.0], [0.0, 0.0]


def assert_position(state, drawing, rewards, terminated):
    np.testing.assert_array_equal(state.board, ascii_board(drawing, bottom_first=True))
    np.testing.assert_array_equal(state.rewards, rewards)
    assert bool(state.terminated) == terminated
    if terminated:
        assert not bool(jnp.any(state.legal_action_mask))


def test_stones_fall_to_the_lowest_empty_cell():
    state = play(C4, [3, 3, 3, 0])
    assert_position(
        state,
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . X . . .
        . . . O . . .
        O . . X . . .
    """,
        NO_RESULT,
        False,
    )
    assert int(state.current_player) == 0
    assert int(state.step_count) == 4
    assert bool(jnp.all(state.legal_action_mask))


# name: (moves, final board, rewards)
WINS_6X7 = {
    "horizontal, last stone at the end": (
        [0, 0, 1, 1, 2, 2, 3],
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        O O O . . . .
        X X X X . . .
    """,
        X_WINS,
    ),
    "horizontal, last stone in the middle": (
        [6, 6, 5, 5, 3, 3, 4],
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . O . O O
        . . . X X X X
    """,
        X_WINS,
    ),
    "horizontal five in the top row": (
        [
            5,
            1,
            2,
            6,
            4,
            6,
            4,
            4,
            2,
            3,
            2,
            3,
            0,
            3,
            6,
            2,
            0,
            6,
            2,
            0,
            4,
            1,
            2,
            5,
            0,
            4,
            6,
            6,
            4,
            1,
            3,
            3,
            3,
            0,
            0,
            5,
            1,
            5,
            5,
            1,
            1,
        ],
        """
        X X X X X . O
        O O X O O X X
        X X O X X O O
        O O X O O O X
        X O X O X O O
        X O X O X X O
    """,
        X_WINS,
    ),
    "vertical": (
        [4, 5, 4, 5, 4, 5, 4],
        """
        . . . . . . .
        . . . . . . .
        . . . . X . .
        . . . . X O .
        . . . . X O .
        . . . . X O .
    """,
        X_WINS,
    ),
    "vertical, second player, in the top row": (
        [
            6,
            5,
            4,
            2,
            4,
            6,
            1,
            6,
            1,
            5,
            4,
            6,
            3,
            4,
            2,
            3,
            3,
            5,
            5,
            5,
            6,
            2,
            0,
            2,
            4,
            0,
            3,
            4,
            6,
            2,
            1,
            1,
            0,
            2,
        ],
        """
        . . O . O . X
        . . O . X O X
        . O O X O X O
        X X O X X O O
        O X X O X O O
        X X O X X O X
    """,
        O_WINS,
    ),
    "diagonal up-right, last stone at the end": (
        [0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3],
        """
        . . . . . . .
        . . . . . . .
        . . . X . . .
        . . X X . . .
        . X X O . . .
        X O O O . . O
    """,
        X_WINS,
    ),
    "diagonal up-left, last stone in the middle": (
        [5, 0, 5, 0, 6, 5, 0, 4, 0, 6, 5, 4, 4, 2, 5, 6, 4, 0, 4, 1, 0, 1, 1, 6, 3, 1, 5, 4, 2],
        """
        X . . . O X .
        O . . . X X .
        X O . . X X O
        X X . . X O O
        O O X . O X O
        O O O X O X X
    """,
        X_WINS,
    ),
    "diagonal up-right, second player, last stone in the middle": (
        [
            4,
            4,
            0,
            4,
            0,
            5,
            6,
            6,
            4,
            6,
            4,
            0,
            5,
            3,
            6,
            1,
            2,
            4,
            5,
            3,
            3,
            3,
            5,
            5,
            1,
            0,
            6,
            0,
            6,
            1,
            2,
            5,
            2,
            2,
            0,
            2,
            2,
            3,
        ],
        """
        X . X . O O X
        O . O O X O X
        O . O O X X X
        O O X X O X O
        X X X O O X O
        X O X O X O X
    """,
        O_WINS,
    ),
    "two lines at once": (
        [4, 5, 1, 6, 5, 3, 3, 1, 6, 3, 3, 1, 1, 3, 2, 4, 1, 2, 3, 6, 6, 0, 4, 1, 4, 0, 5, 6, 5],
        """
        . O . X . . .
        . X . O . . O
        . X . X X X X
        . O . O X X O
        O O O X O X X
        O X X O X O O
    """,
        X_WINS,
    ),
}

WINS_6X8 = {
    "horizontal touching the right edge": (
        [7, 7, 6, 6, 5, 5, 4],
        """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . O O O
        . . . . X X X X
    """,
        X_WINS,
    ),
    "horizontal, second player, row 1, last stone in the middle": (
        [
            1,
            5,
            3,
            6,
            7,
            1,
            0,
            7,
            5,
            1,
            4,
            2,
            6,
            4,
            1,
            3,
            0,
            6,
            7,
            5,
            3,
            7,
            5,
            1,
            0,
            0,
            7,
            4,
            0,
            3,
            3,
            1,
            7,
            6,
            5,
            6,
            5,
            4,
            6,
            3,
            0,
            2,
        ],
        """
        X O . O . X X X
        X O . X . X O X
        O X . O O X O O
        X O . X O O O X
        X O O O O X X O
        X X O X X O O X
    """,
        O_WINS,
    ),
    "vertical in the last column": (
        [7, 0, 7, 0, 7, 0, 7],
        """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . X
        O . . . . . . X
        O . . . . . . X
        O . . . . . . X
    """,
        X_WINS,
    ),
    "diagonal up-right ending in the last column": (
        [4, 5, 5, 6, 6, 7, 6, 7, 7, 0, 7],
        """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . X
        . . . . . . X X
        . . . . . X X O
        O . . . X O O O
    """,
        X_WINS,
    ),
    "diagonal up-right, second player, into the top-right corner": (
        [5, 5, 6, 4, 5, 6, 4, 1, 7, 4, 1, 7, 2, 5, 3, 2, 5, 7, 3, 1, 6, 6, 7, 7, 3, 6, 4, 7],
        """
        . . . . . . . O
        . . . . . X O O
        . . . . X O O X
        . O . X O X X O
        . X O X X O O O
        . O X X O X X X
    """,
        O_WINS,
    ),
    "diagonal up-left from the last column": (
        [7, 6, 6, 5, 5, 4, 5, 4, 4, 0, 4],
        """
        . . . . . . . .
        . . . . . . . .
        . . . . X . . .
        . . . . X X . .
        . . . . O X X .
        O . . . O O O X
    """,
        X_WINS,
    ),
    "diagonal up-left, five in a row": (
        [
            0,
            0,
            1,
            7,
            4,
            4,
            6,
            1,
            5,
            3,
            3,
            6,
            4,
            6,
            5,
            5,
            0,
            7,
            7,
            2,
            5,
            3,
            4,
            5,
            6,
            5,
            2,
            7,
            2,
            3,
            4,
            6,
            3,
            4,
            7,
            2,
            3,
            0,
            0,
            0,
            6,
            1,
            1,
        ],
        """
        O . . X O O X .
        X . . X X O O X
        O X O O X X X O
        X O X O X O O X
        O O X X O X O O
        X X O O X X X O
    """,
        X_WINS,
    ),
}


@pytest.mark.parametrize("case", WINS_6X7, ids=list(WINS_6X7))
def test_wins_6x7(case):
    moves, drawing, rewards = WINS_6X7[case]
    assert_position(play(C4, moves), drawing, rewards, True)


@pytest.mark.parametrize("case", WINS_6X8, ids=list(WINS_6X8))
def test_wins_6x8(case):
    moves, drawing, rewards = WINS_6X8[case]
    assert_position(play(FIAR, moves), drawing, rewards, True)


def test_cells_adjacent_in_memory_but_not_on_the_board_make_no_line():
    # X holds flat cells 5, 6, 7, 8 (row 0 cols 5-6, row 1 cols 0-1): consecutive in memory.
    state = play(C4, [5, 0, 6, 1, 0, 2, 1])
    assert_position(
        state,
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        X X . . . . .
        O O O . . X X
    """,
        NO_RESULT,
        False,
    )


def test_three_in_a_row_with_a_gap_is_no_win():
    state = play(C4, [0, 0, 1, 1, 3, 3])
    assert_position(
        state,
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        O O . O . . .
        X X . X . . .
    """,
        NO_RESULT,
        False,
    )


@pytest.mark.parametrize(
    ("game", "moves", "drawing"),
    [
        (
            C4,
            [int(c) for c in "000000111111422222233333344444555556666665"],
            """
            O O X X O O X
            X X O O X X O
            O O X X O O X
            X X O O X X O
            O O X X O O X
            X X O O X X O
        """,
        ),
        (
            FIAR,
            [int(c) for c in "000000111111422222233333344444555556666667777775"],
            """
            O O X X O O X X
            X X O O X X O O
            O O X X O O X X
            X X O O X X O O
            O O X X O O X X
            X X O O X X O O
        """,
        ),
    ],
    ids=["6x7", "6x8"],
)
def test_full_board_without_a_line_is_a_draw(game, moves, drawing):
    before_last = play(game, moves[:-1])
    assert not bool(before_last.terminated)
    assert int(jnp.sum(before_last.legal_action_mask)) == 1
    state = play(game, moves)
    assert_position(state, drawing, NO_RESULT, True)
    assert int(state.step_count) == len(moves)


def test_full_column_is_illegal_and_forfeits():
    state = play(C4, [2] * 6)
    assert not bool(state.legal_action_mask[2])
    with pytest.raises(
        ValueError, match=r"action 2 is not legal .* legal actions: \[0 \(column 0\)"
    ):
        play(C4, [2] * 7)
    forfeit = C4.step(state, jnp.int32(2), None)  # X plays into the full column and loses
    np.testing.assert_array_equal(forfeit.board, state.board)
    np.testing.assert_array_equal(forfeit.rewards, O_WINS)
    assert bool(forfeit.terminated)
    for bad in (-1, 7, 100):
        out = C4.step(state, jnp.int32(bad), None)
        np.testing.assert_array_equal(out.rewards, O_WINS)
        np.testing.assert_array_equal(out.board, state.board)


def test_connect_option_changes_the_line_length():
    five = jaxgames.make("connect_four", rows=10, cols=10, connect=5)
    four = play(five, [0, 0, 1, 1, 2, 2, 3, 3])
    assert not bool(four.terminated)
    state = play(five, [0, 0, 1, 1, 2, 2, 3, 3, 4])
    np.testing.assert_array_equal(state.rewards, X_WINS)
    three = jaxgames.make("connect_four", rows=5, cols=9, connect=3)
    np.testing.assert_array_equal(play(three, [8, 8, 7, 7, 6]).rewards, X_WINS)


def test_observe_is_from_the_players_point_of_view():
    state = play(C4, [3, 4])
    mine = np.asarray(C4.observe(state, jnp.int32(0)))
    theirs = np.asarray(C4.observe(state, jnp.int32(1)))
    assert mine.shape == (6, 7, 2) and mine.dtype == bool
    assert mine[0, 3, 0] and mine[0, 4, 1]
    np.testing.assert_array_equal(theirs, mine[..., ::-1])


def test_render_draws_row_zero_at_the_bottom():
    assert C4.render(play(C4, [3, 3])).splitlines()[-3:] == [
        ". . . O . . .",
        ". . . X . . .",
        "0 1 2 3 4 5 6",
    ]
