"""Nim and three-player Nim on scripted games."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from tests.helpers import play

NIM = jaxgames.make("nim")  # 3 heaps of 5, take 1..5
NIM3P = jaxgames.make("nim3p")  # 3 heaps of 5, take any number


def act(heap: int, take: int, max_take: int = 5) -> int:
    return heap * max_take + take - 1


def test_nim_actions_take_from_one_heap():
    state = play(NIM, [act(0, 2), act(2, 5)])
    np.testing.assert_array_equal(state.board, [3, 5, 0])
    mask = np.asarray(state.legal_action_mask).reshape(3, 5)
    np.testing.assert_array_equal(mask[0], [1, 1, 1, 0, 0])
    np.testing.assert_array_equal(mask[1], [1, 1, 1, 1, 1])
    np.testing.assert_array_equal(mask[2], [0, 0, 0, 0, 0])


@pytest.mark.parametrize(
    ("moves", "rewards"),
    [
        ([act(0, 5), act(1, 5), act(2, 5)], [1, -1]),  # player 0 takes the last item and wins
        ([act(0, 5), act(1, 5), act(2, 4), act(2, 1)], [-1, 1]),
    ],
)
def test_nim_last_item_wins(moves, rewards):
    state = play(NIM, moves)
    np.testing.assert_array_equal(state.board, [0, 0, 0])
    np.testing.assert_array_equal(state.rewards, rewards)
    assert bool(state.terminated)


def test_nim_max_take_limits_moves():
    small = jaxgames.make("nim", heaps=2, size=7, max_take=3)
    assert small.num_actions == 6
    with pytest.raises(ValueError, match="not legal"):
        play(small, [act(0, 3, 3), act(0, 3, 3), act(0, 3, 3)])  # only 1 item left in heap 0
    state = small.step(play(small, [act(0, 3, 3), act(0, 3, 3)]), jnp.int32(act(0, 3, 3)), None)
    np.testing.assert_array_equal(state.rewards, [-1, 1])  # player 0 forfeits


TAKER_GAMES = {
    0: [act(0, 5), act(1, 5), act(2, 4), act(2, 1)],
    1: [act(0, 5), act(1, 5), act(2, 3), act(2, 1), act(2, 1)],
    2: [act(0, 5), act(1, 5), act(2, 5)],
}


@pytest.mark.parametrize(
    ("taker", "rewards"), [(0, [0, 1, 0.2]), (1, [0.2, 0, 1]), (2, [1, 0.2, 0])]
)
def test_nim3p_rewards_taker_winner_third(taker, rewards):
    """The taker of the last item gets 0, the next player 1, the one after 0.2."""
    state = play(NIM3P, TAKER_GAMES[taker])
    np.testing.assert_array_equal(state.board, [0, 0, 0])
    np.testing.assert_allclose(state.rewards, rewards)
    assert bool(state.terminated)
    assert int(state.current_player) == (taker + 1) % 3


def test_nim3p_illegal_move_is_scored_as_taking_the_last_item():
    state = play(NIM3P, [act(0, 5)])
    out = NIM3P.step(state, jnp.int32(act(0, 1)), None)  # player 1 takes from an empty heap
    np.testing.assert_allclose(out.rewards, [0.2, 0, 1])
    np.testing.assert_array_equal(out.board, state.board)


def test_nim3p_players_rotate():
    state = play(NIM3P, [act(0, 1), act(0, 1)])
    assert int(state.current_player) == 2
    assert NIM3P.num_players == 3 and NIM3P.num_actions == 15
