"""Perfect players for small games, checked against independent references."""

from __future__ import annotations

import functools
import itertools

import jax
import numpy as np
import pytest

import jaxgames
from jaxgames.evaluation import arena
from jaxgames.opponents import make_opponent, perfect, random_policy
from tests import reference


def test_tictactoe_perfect_play_draws_and_never_loses():
    game = jaxgames.make("tictactoe")
    best = make_opponent("perfect", game)
    both = arena(game, best, best, 200, jax.random.key(0))
    assert both.overall.draws == both.overall.games
    vs_random = arena(game, best, random_policy, 300, jax.random.key(1))
    assert vs_random.overall.losses == 0
    assert vs_random.by_seat[0].win_rate > 0.95 and vs_random.by_seat[1].win_rate > 0.75


def _plain_values(ref_factory, players=2):
    """Plain-Python Max-N (mean over tied best moves) of the position after `moves`.

    Memoised on each player's set of moves (in both TicTacToe and Nim the position is a
    function of it), so the search visits positions, not the ~550k TicTacToe move orders."""

    memo = {}

    def value(path):
        key = tuple(tuple(sorted(path[i::players])) for i in range(players))
        if key not in memo:
            memo[key] = _value(path)
        return memo[key]

    def _value(path):
        game = ref_factory()
        for a in path:
            game.play(a)
        if game.over:
            return tuple(game.rewards)
        children = []
        for a in game.legal():
            child = ref_factory()
            for b in path:
                child.play(b)
            child.play(a)
            own = child.rewards if child.over else value((*path, a))
            children.append(np.asarray(own))
        mover = game.player
        top = max(c[mover] for c in children)
        return tuple(np.mean([c for c in children if c[mover] >= top - 1e-9], axis=0))

    return value


def test_tictactoe_move_values_match_plain_minimax():
    game = jaxgames.make("tictactoe")
    value = _plain_values(reference.TicTacToe)
    for moves in [(), (4,), (0, 4), (0, 1, 3), (4, 0, 8, 2)]:
        state = game.init(None)
        for m in moves:
            state = jaxgames.checked_step(game, state, m)
        table = perfect.move_values(game, state)
        for a in jaxgames.legal_actions(state):
            np.testing.assert_allclose(table[a], value((*moves, a)), atol=1e-6)


def test_nim_values_match_the_sprague_grundy_theory():
    """Normal-play Nim with take <= k: the mover loses iff XOR of (heap mod (k+1)) is 0."""
    game = jaxgames.make("nim", heaps=3, size=5, max_take=3)
    table = perfect.solve(game)
    start = game.init(None)
    state_key = jax.jit(functools.partial(perfect.state_key, game))  # compiled once
    for heaps in itertools.product(range(6), repeat=3):
        if sum(heaps) == 0:
            continue
        for player in (0, 1):
            state = start.replace(board=np.asarray(heaps, np.int8), current_player=np.int32(player))
            key = int(state_key(state))
            if not table.best[key].any():
                continue  # not reachable from the start
            grundy = np.bitwise_xor.reduce([h % 4 for h in heaps])
            value = np.nanmax(table.move_values[key, :, player])
            assert value == (1.0 if grundy else -1.0), (heaps, player)


def test_nim3p_values_match_plain_max_n():
    game = jaxgames.make("nim3p", heaps=2, size=4)
    value = _plain_values(lambda: reference.Nim(2, 4, 4, players=3), players=3)
    state = game.init(None)
    table = perfect.move_values(game, state)
    for a in jaxgames.legal_actions(state):
        np.testing.assert_allclose(table[a], value((a,)), atol=1e-6)


def test_perfect_nim3p_players_score_the_ideal_average():
    game = jaxgames.make("nim3p")
    best = make_opponent("perfect", game)
    result = arena(game, best, best, 50, jax.random.key(2))
    assert result.overall.score == pytest.approx(0.4, abs=1e-6)


def test_games_too_large_for_a_table_are_refused():
    c4 = jaxgames.make("connect_four", rows=5, cols=5)
    assert not perfect.supports(c4)
    with pytest.raises(ValueError, match="too large"):
        perfect.solve(c4)


@pytest.mark.parametrize(
    ("name", "options", "change", "message"),
    [
        ("tictactoe", {}, {"board": [[5, 0, 0], [0, 0, 0], [0, 0, 0]]}, r"outside 0\.\.2"),
        ("tictactoe", {}, {"current_player": 2}, r"player 2 is not in 0\.\.1"),
        ("tictactoe", {}, {"board": [[1, 1, 0], [0, 0, 0], [0, 0, 0]]}, "no game reaches"),
        ("tictactoe", {}, {"terminated": True}, "the game is over"),
        ("nim", {"heaps": 3, "size": 5, "max_take": 5}, {"board": [9, 5, 5]}, r"outside 0\.\.5"),
        ("nim", {"heaps": 3, "size": 5, "max_take": 5}, {"board": [-1, 5, 5]}, r"outside 0\.\.5"),
        ("nim3p", {"heaps": 3, "size": 5}, {"current_player": 3}, r"player 3 is not in 0\.\.2"),
    ],
)
def test_perfect_tables_refuse_states_no_game_reaches(name, options, change, message):
    import jax.numpy as jnp

    game = jaxgames.make(name, **options)
    start = game.init(jax.random.key(0))
    fields = {k: jnp.asarray(v, getattr(start, k).dtype) for k, v in change.items()}
    with pytest.raises(ValueError, match=message):
        perfect.move_values(game, start.replace(**fields))
    assert np.isfinite(perfect.move_values(game, start)).any()
