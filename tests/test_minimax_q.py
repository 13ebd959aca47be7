"""Max/min self-play Q-learning (the capstone report): targets on hand-made arrays, the replay
ring buffer, and seeded runs that must reach a stated strength."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.approximators import ValueModel
from jaxgames.builders import make_learner
from jaxgames.config import Config, from_dict
from jaxgames.learning import minimax_q
from jaxgames.learning.schedules import Schedule
from tests.test_learning import run

# A 3-state x 3-action table: features are the state's row (every game state reads row 1).
TABLE = jnp.array([[0.1, 0.5, -0.2], [0.9, -0.7, 0.3], [0.0, 0.0, 0.0]])
TABLE_MODEL = ValueModel(
    num_players=1,
    num_outputs=3,
    output="identity",
    init=lambda key: TABLE,
    init_scratch=lambda params: None,
    features=lambda state: jnp.int32(1),
    afterstate_features=None,
    value=lambda params, player, f, a: params[f, a],
    update=None,
    describe=None,
)


@pytest.mark.parametrize("jit", [False, True])
def test_targets_take_max_for_the_first_player_and_min_for_the_second(jit):
    batch = minimax_q.Transitions(
        features=jnp.zeros(4, jnp.int32),
        action=jnp.zeros(4, jnp.int32),
        reward=jnp.array([0.0, 0.0, 1.0, 0.0]),
        next_features=jnp.array([0, 1, 1, 0]),
        next_legal=jnp.array([[1, 1, 1], [1, 0, 1], [1, 1, 1], [0, 0, 1]], bool),
        next_max=jnp.array([True, False, True, True]),
        done=jnp.array([False, False, True, False]),
    )
    spec = minimax_q.MinimaxQConfig(gamma=0.9)
    fn = minimax_q.target_values
    if jit:
        fn = jax.jit(fn, static_argnums=(0, 1))
    y = np.asarray(fn(TABLE_MODEL, spec, TABLE, batch))
    # max of row 0 = 0.5; min over legal {0, 2} of row 1 = 0.3; terminal: the reward; only
    # action 2 legal in row 0: -0.2.
    np.testing.assert_allclose(y, [0.9 * 0.5, 0.9 * 0.3, 1.0, 0.9 * -0.2], rtol=1e-6)


def test_scores_are_what_the_mover_maximises():
    game = jaxgames.make("tictactoe")
    state = game.init(jax.random.key(0))
    spec = minimax_q.MinimaxQConfig()
    second = state.replace(current_player=jnp.int32(1))
    s0 = minimax_q.action_scores(game, TABLE_MODEL, spec, TABLE, state)
    s1 = minimax_q.action_scores(game, TABLE_MODEL, spec, TABLE, second)
    np.testing.assert_allclose(s0, TABLE[1])
    np.testing.assert_allclose(s1, -TABLE[1])


def test_replay_buffer_fills_as_a_ring_and_the_target_follows_every_third_update():
    cfg = from_dict(
        Config,
        {
            "game": {"name": "tictactoe"},
            "approximator": {"kind": "tabular", "symmetries": False, "output": "identity"},
            "algorithm": {
                "kind": "minimax_q",
                "replay_size": 40,
                "replay_batch": 8,
                "target_every": 3,
                "alpha": {"kind": "constant", "start": 0.5},
            },
            "train": {"games": 100, "batch_size": 16, "chunk_steps": 1},
        },
    )
    learner = make_learner(cfg)
    carry = learner.init(jax.random.key(0))
    history = [np.asarray(carry.params["w"])]
    for k in range(1, 13):
        carry, metrics = learner.chunk(carry)
        assert int(metrics.updates) == 8 and int(carry.updates) == k
        assert int(carry.replay.size) == min(16 * k, 40)
        assert int(carry.replay.pos) == (16 * k) % 40
        history.append(np.asarray(carry.params["w"]))
        np.testing.assert_array_equal(np.asarray(carry.target["w"]), history[3 * (k // 3)])
    assert np.any(history[-1] != 0)  # games ended and the table learned


def test_rejects_games_it_cannot_learn():
    with pytest.raises(ValueError, match="two-player zero-sum game, not 'nim3p'"):
        minimax_q.init_carry(
            jaxgames.make("nim3p"), TABLE_MODEL, minimax_q.MinimaxQConfig(), 4, jax.random.key(0)
        )
    with pytest.raises(ValueError, match="algorithm: max/min Q-learning needs"):
        from_dict(
            Config,
            {
                "game": {"name": "2048"},
                "algorithm": {"kind": "minimax_q"},
                "approximator": {"kind": "tabular"},
            },
        )
    with pytest.raises(ValueError, match=r"replay_batch=64: expected 1\.\.replay_size"):
        minimax_q.MinimaxQConfig(replay_size=10, replay_batch=64, alpha=Schedule("constant", 0.1))


@pytest.mark.optimized
def test_tabular_q_never_loses_to_the_perfect_player():
    result = run("tictactoe-tabular-q")
    assert result["losses"] == 0, result


@pytest.mark.slow  # 40-50 s; the CNN learning check of the default run is CNN-TD's
@pytest.mark.optimized
def test_cnn_dqn_learns_tictactoe():
    result = run("tictactoe-cnn-dqn", train__games=10_000)
    assert result["score"] >= -0.25, result
