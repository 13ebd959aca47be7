"""Othello rules on drawn positions (flips in all eight directions, runs that do not close,
passes, the end by no moves, draws), full random games against the plain-Python reference, and
the Heur / Bench players."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxgames
from jaxgames import core
from jaxgames.evaluation import arena
from jaxgames.games.othello import state_from_board
from jaxgames.opponents import make_opponent, random_policy
from jaxgames.opponents.othello import HEUR_WEIGHTS, move_scores
from tests import reference
from tests.helpers import ascii_board, random_games
from tests.test_crosscheck import replay_disagreements

GAME = jaxgames.make("othello")


def test_a_move_flips_in_all_eight_directions_and_ends_the_game():
    board = ascii_board(
        """
        . . . . . . . .
        . X . X . X . .
        . . O O O . . .
        . X O . O X . .
        . . O O O . . .
        . X . X . X . .
        . . . . . . . .
        . . . . . . . .
        """
    )
    state = state_from_board(board, 0)
    assert bool(state.legal_action_mask[27]) and not bool(state.legal_action_mask[64])
    after = core.checked_step(GAME, state, 27)
    expected = board.copy()
    expected[expected == 2] = 1
    expected[3, 3] = 1
    np.testing.assert_array_equal(after.board, expected)
    # no white disc is left: neither player can move, black wins 17-0
    assert bool(after.terminated)
    np.testing.assert_array_equal(after.rewards, [1.0, -1.0])


def test_long_runs_flip_and_open_runs_do_not():
    board = ascii_board(
        """
        X O O O . O O .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . O
        """
    )
    state = state_from_board(board, 0)
    np.testing.assert_array_equal(np.flatnonzero(state.legal_action_mask), [4])
    after = core.checked_step(GAME, state, 4)
    np.testing.assert_array_equal(after.board[0], [1, 1, 1, 1, 1, 2, 2, 0])


def test_a_player_without_moves_must_pass():
    board = np.zeros((8, 8), np.int8)
    board[0, 0], board[0, 1] = 1, 2
    state = state_from_board(board, 1)  # white: no move, black has one
    np.testing.assert_array_equal(np.flatnonzero(state.legal_action_mask), [64])
    with pytest.raises(ValueError, match=r"action 2 is not legal.*\[64 \(pass\)\]"):
        core.checked_step(GAME, state, 2)
    passed = core.checked_step(GAME, state, 64)
    assert int(passed.current_player) == 0 and not bool(passed.terminated)
    np.testing.assert_array_equal(passed.board, board)
    np.testing.assert_array_equal(np.flatnonzero(passed.legal_action_mask), [2])
    end = core.checked_step(GAME, passed, 2)
    assert bool(end.terminated)
    np.testing.assert_array_equal(end.rewards, [1.0, -1.0])


def test_no_moves_for_either_player_ends_the_game_and_equal_counts_draw():
    board = np.zeros((8, 8), np.int8)
    board[0, 0], board[7, 7] = 1, 2  # nothing can be enclosed
    state = state_from_board(board, 0)
    assert bool(state.terminated) and not state.legal_action_mask.any()
    np.testing.assert_array_equal(state.rewards, [0.0, 0.0])
    board[3, 3] = 1
    np.testing.assert_array_equal(state_from_board(board, 0).rewards, [1.0, -1.0])


# the default run plays 256 full random games against pgx's Othello instead, every field at
# every step (tests/test_interop.py); tests/test_crosscheck.py replays games with forfeits here
@pytest.mark.slow
def test_full_random_games_agree_with_the_reference():
    actions, states = random_games(GAME, 150, 124, jax.random.key(3))
    assert bool(states.terminated[:, -1].all())
    assert not replay_disagreements("othello", {}, np.asarray(actions), states)


def test_passes_occur_in_random_games_and_match_the_reference():
    actions, _ = random_games(GAME, 150, 124, jax.random.key(3))
    assert (np.asarray(actions) == 64).any()


def test_heur_weights_are_symmetric_and_prefer_corners():
    np.testing.assert_array_equal(HEUR_WEIGHTS, HEUR_WEIGHTS[::-1])
    np.testing.assert_array_equal(HEUR_WEIGHTS, HEUR_WEIGHTS[:, ::-1])
    board = ascii_board(
        """
        . O X . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        """
    )
    board[1, 1] = 2
    board[2, 2] = 1
    state = state_from_board(board, 0)
    scores = np.asarray(move_scores(GAME, HEUR_WEIGHTS, state))
    assert np.argmax(scores) == 0  # the corner, flipping (0, 1) or (1, 1)


@pytest.mark.parametrize("name", ["heur", "bench"])
@pytest.mark.slow  # 20-60 s each to compile; their move scores are checked above
def test_positional_players_beat_random(name):
    result = arena(GAME, make_opponent(name, GAME), random_policy, 50, jax.random.key(0))
    assert result.overall.score > 0.5, result.overall


def test_positional_players_are_othello_only():
    with pytest.raises(ValueError, match="unknown opponent 'bench'"):
        make_opponent("bench", jaxgames.make("tictactoe"))
    assert reference.for_game("othello", {}).legal() == [19, 26, 37, 44]
