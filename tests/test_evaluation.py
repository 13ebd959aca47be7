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
    assert r.points == pytest.approx(2.5 / 4)  # a draw is worth half a win
    assert r.points == pytest.approx((r.score + 1) / 2)  # two players, rewards +1 / 0 / -1


def test_wrong_number_of_opponents_is_rejected():
    game = jaxgames.make("nim3p")
    with pytest.raises(ValueError, match="needs 2 opponent"):
        arena(game, random_policy, [random_policy], 1, jax.random.key(0))


def test_one_param_policy_opponent_takes_every_other_seat():
    """A ParamPolicy is a NamedTuple: alone, it is one opponent, not a list of them."""
    from jaxgames.policies import ParamPolicy

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


def test_recorded_moves_are_the_same_games_and_replay_to_the_final_boards():
    from jaxgames.core import checked_step
    from jaxgames.opponents import make_opponent

    game = jaxgames.make("tictactoe")
    perfect = make_opponent("perfect", game)
    openings = opening_moves(game, 1)
    plain = arena(game, random_policy, perfect, 3, jax.random.key(5), openings=openings)
    recorded = arena(
        game, random_policy, perfect, 3, jax.random.key(5), openings=openings, record_moves=True
    )
    assert recorded.overall == plain.overall and plain.moves is None
    np.testing.assert_array_equal(recorded.final_boards, plain.final_boards)
    assert len(recorded.moves) == len(recorded.agent_players) == 2 * 9 * 3
    for moves, board, opening, start in zip(
        recorded.moves,
        recorded.final_boards,
        recorded.opening_plies,
        [o for _ in range(2) for o in openings for _ in range(3)],
        strict=True,
    ):
        assert opening == 1 and moves[:1] == start
        state = game.init(jax.random.key(0))
        for move in moves:
            state = checked_step(game, state, move)
        assert bool(state.terminated)
        np.testing.assert_array_equal(state.board, board)


def test_mistakes_against_the_perfect_player_are_exactly_the_lost_games():
    """TicTacToe is a draw and the perfect player converts every mistake into a win: a
    random agent loses exactly the games in which it made a mistake; a perfect one makes
    none."""
    from jaxgames.analysis import mistakes
    from jaxgames.opponents import make_opponent, perfect_values

    game = jaxgames.make("tictactoe")
    perfect, values = make_opponent("perfect", game), perfect_values(game)
    result = arena(game, random_policy, perfect, 40, jax.random.key(1), record_moves=True)
    report = mistakes(game, result, values)
    assert report.games == 80 and report.games_with_mistakes == result.overall.losses > 0
    assert report.mistakes >= report.games_with_mistakes
    assert sum(m.games for m in report.positions) == report.mistakes
    assert [m.games for m in report.positions] == sorted(
        (m.games for m in report.positions), reverse=True
    )
    for m in report.positions:
        assert m.values[m.action] < np.nanmax(m.values)
    # By hand: after X takes a corner (0), only the centre (4) holds the draw for O.
    corner = [m for m in report.positions if m.moves == (0,)]
    for m in corner:
        assert m.action != 4 and m.values[4] == 0 and m.values[m.action] == -1
    perfect_result = arena(game, perfect, perfect, 40, jax.random.key(1), record_moves=True)
    clean = mistakes(game, perfect_result, values)
    assert (clean.mistakes, clean.positions) == (0, ())
    assert clean.agent_moves == sum(
        (len(m) + (seat == 0)) // 2
        for m, seat in zip(perfect_result.moves, perfect_result.agent_players, strict=True)
    )
    with pytest.raises(ValueError, match="record_moves=True"):
        mistakes(game, arena(game, perfect, perfect, 1, jax.random.key(0)), values)


def test_connect_four_mistakes_use_the_solver_values():
    """Always the leftmost column, moving first: the first move is already a mistake (only the
    centre column wins the empty 7x6 board; columns 2 and 4 draw)."""
    from jaxgames.analysis import mistakes
    from jaxgames.opponents import make_opponent, perfect_values

    game = jaxgames.make("connect_four")
    result = arena(
        game, first_legal, make_opponent("perfect", game), 2, jax.random.key(0), seats="first",
        record_moves=True,
    )  # fmt: skip
    report = mistakes(game, result, perfect_values(game))
    assert result.overall.losses == 2 and report.games_with_mistakes == 2
    first = report.positions[0]
    assert (first.moves, first.action, first.games) == ((), 0, 2)
    assert first.values == (-1, -1, 0, 1, 0, -1, -1)


def test_perfect_values_name_the_games_that_have_them():
    from jaxgames.opponents import perfect_values

    with pytest.raises(ValueError, match=r"no perfect player for Game\(hex.*tictactoe, nim"):
        perfect_values(jaxgames.make("hex"))
