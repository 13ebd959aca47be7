"""The arena: seatings, results, intervals, openings, and that policies only see their turns."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.evaluation import arena, opening_moves, seatings, summarize
from jaxgames.opponents import random_policy


def first_legal(states, key):
    del key
    return jnp.argmax(states.legal_action_mask, axis=-1).astype(jnp.int32)


def test_seatings_cover_every_seat_and_opponent_order():
    assert seatings(2) == [(0, 1), (1, 0)]
    assert seatings(2, "first") == [(0, 1)]
    assert seatings(2, "second") == [(1, 0)]
    three = seatings(3)
    assert len(three) == 6 and all(sorted(s) == [0, 1, 2] for s in three)
    with pytest.raises(ValueError, match="out of range"):
        seatings(2, [2])


def test_deterministic_players_give_known_results():
    """Nim 1 heap of 3, take <= 3: the first mover takes all and wins."""
    game = jaxgames.make("nim", heaps=1, size=3, max_take=3)

    def take_all(states, key):
        del key
        return jnp.full(states.current_player.shape, 2, jnp.int32)  # take 3 from heap 0

    result = arena(game, take_all, first_legal, 10, jax.random.key(0))
    assert result.by_seat[0].wins == 10 and result.by_seat[0].score == 1.0
    assert result.by_seat[1].losses == 10 and result.by_seat[1].score == -1.0
    assert result.overall.games == 20 and result.overall.score == 0.0


def test_policies_are_only_asked_where_they_are_to_move():
    game = jaxgames.make("tictactoe")
    seen = []

    def checking(states, key):
        def host(terminated, mask, players):
            live = ~np.asarray(terminated)
            seen.append(np.asarray(players)[live])
            assert np.all(np.asarray(mask)[~live] == 0)
            return np.zeros(len(live), np.int32)

        jax.debug.callback(host, states.terminated, states.legal_action_mask, states.current_player)
        return random_policy(states, key)

    arena(game, checking, random_policy, 4, jax.random.key(1), seats="first")
    assert np.all(np.concatenate(seen) == 0), "the agent (seat 0) was asked to move for player 1"


def test_openings_start_games_after_the_given_moves():
    game = jaxgames.make("tictactoe")
    openings = opening_moves(game, 1)
    assert openings == [(a,) for a in range(9)]
    assert len(opening_moves(game, 2)) == 72
    result = arena(game, first_legal, first_legal, 1, jax.random.key(2), openings=openings)
    assert result.overall.games == 2 * 9


def test_summary_statistics():
    r = summarize(
        np.array([1.0, -1.0, 0.0, 1.0]), np.array([1, 0, 0, 1], bool), np.array([0, 0, 1, 0], bool)
    )
    assert (r.games, r.wins, r.draws, r.losses) == (4, 2, 1, 1)
    assert r.score == pytest.approx(0.25)
    assert r.ci95 == pytest.approx(1.959964 * np.std([1, -1, 0, 1], ddof=1) / 2)
    assert 0 < r.win_ci95 < 0.5


def test_wrong_number_of_opponents_is_rejected():
    game = jaxgames.make("nim3p")
    with pytest.raises(ValueError, match="needs 2 opponent"):
        arena(game, random_policy, [random_policy], 1, jax.random.key(0))


def test_one_param_policy_opponent_takes_every_other_seat():
    """A ParamPolicy is a NamedTuple: alone, it is one opponent, not a list of them."""
    from jaxgames.selfplay import ParamPolicy

    game = jaxgames.make("nim3p")
    opponent = ParamPolicy(lambda params, states, key: first_legal(states, key), None)
    result = arena(game, random_policy, opponent, 2, jax.random.key(0))
    assert result.overall.games == 2 * len(seatings(3))


def test_epsilon_greedy_wraps_any_policy():
    from jaxgames.opponents import epsilon_greedy

    game = jaxgames.make("connect_four")
    states = jax.vmap(game.init)(jax.random.split(jax.random.key(0), 4000))
    first_column = lambda s, key: jnp.zeros(s.terminated.shape, jnp.int32)
    for eps in (0.0, 0.3, 1.0):
        policy = epsilon_greedy(first_column, eps)
        actions = np.asarray(jax.jit(policy.fn)(policy.params, states, jax.random.key(1)))
        # a random move is column 0 one time in seven
        assert abs(np.mean(actions != 0) - eps * 6 / 7) < 0.03, eps
    with pytest.raises(ValueError, match=r"epsilon=1\.5: expected a probability"):
        epsilon_greedy(first_column, 1.5)
