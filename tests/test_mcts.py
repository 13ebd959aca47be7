"""MCTS opponent: our search loop against mctx's, and the player on hand-drawn positions."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.evaluation import arena
from jaxgames.opponents import make_opponent, mcts, random_policy
from tests.helpers import play, random_games


@pytest.mark.parametrize(
    ("name", "options", "moves", "sims"),
    [
        ("tictactoe", {}, 2, 60),
        # two more two-player games: 10-20 s each to compile, in the slow run
        pytest.param("hex", {"size": 3}, 1, 50, marks=pytest.mark.slow),
        pytest.param("connect_four", {"rows": 4, "cols": 5}, 3, 40, marks=pytest.mark.slow),
        ("2048", {}, 5, 30),  # one player, chance in the model's steps
    ],
)
def test_search_builds_the_same_tree_as_mctx_search(name, options, moves, sims):
    game = jaxgames.make(name, **options)
    _, games = random_games(game, 3, moves, jax.random.key(7))  # ended games stay ended
    states = jax.tree.map(lambda x: x[:, -1], games)
    root_fn, recurrent_fn = mcts.playout_model(game)
    root = root_fn(states, jax.random.key(1))
    invalid = ~states.legal_action_mask
    ours = jax.jit(lambda k: mcts.search(root, recurrent_fn, sims, k, invalid))(jax.random.key(2))
    theirs = jax.jit(lambda k: mcts.mctx_search(root, recurrent_fn, sims, k, invalid))(
        jax.random.key(2)
    )
    for field in ("node_visits", "parents", "action_from_parent", "children_index"):
        np.testing.assert_array_equal(getattr(ours, field), getattr(theirs, field), field)
    np.testing.assert_array_equal(ours.children_visits, theirs.children_visits)
    for field in ("node_values", "raw_values", "children_values", "children_rewards"):
        np.testing.assert_allclose(getattr(ours, field), getattr(theirs, field), atol=1e-5)
    for a, b in zip(
        jax.tree.leaves(ours.embeddings), jax.tree.leaves(theirs.embeddings), strict=True
    ):
        np.testing.assert_array_equal(a, b)
    # every simulation added one visit to the root
    np.testing.assert_array_equal(ours.node_visits[:, 0], sims + 1)


def _moves(game, state, policy, games=8):
    states = jax.tree.map(lambda x: jnp.stack([x] * games), state)
    return np.asarray(jax.jit(policy)(states, jax.random.key(3)))


def test_mcts_takes_a_win_and_blocks_a_loss():
    # X . X / O O . / . . .  with X to move: X wins at 1 (O would win at 5)
    game = jaxgames.make("tictactoe")
    state = play(game, [0, 3, 2, 4])
    assert int(state.current_player) == 0
    assert set(_moves(game, state, mcts.mcts_policy(game, 200))) == {1}
    # X X . / . O . / . . .  with O to move: only 2 stops X
    state = play(game, [0, 4, 1])
    assert int(state.current_player) == 1
    assert set(_moves(game, state, mcts.mcts_policy(game, 400))) == {2}


def test_mcts_beats_random_at_tictactoe():
    game = jaxgames.make("tictactoe")
    result = arena(game, make_opponent("mcts:200", game), random_policy, 40, jax.random.key(0))
    # random playouts with 200 simulations still lose the odd game in the second seat
    assert result.by_seat[0].win_rate > 0.85
    assert result.overall.score > 0.7 and result.overall.losses <= 5


def test_mcts_rejects_bad_settings():
    with pytest.raises(ValueError, match="1 or 2 players"):
        mcts.mcts_policy(jaxgames.make("nim3p"), 10)
    with pytest.raises(ValueError, match="num_simulations must be >= 1, got 0"):
        mcts.mcts_policy(jaxgames.make("tictactoe"), 0)
    with pytest.raises(ValueError, match="mcts:N"):
        make_opponent("mcts:x", jaxgames.make("tictactoe"))
