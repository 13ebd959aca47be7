"""The player-centred update rows of TD/SARSA/Q-FARL, on hand-computed cases.

A stub model reads values from a small table (feature = row index, identity output), so every
target and delta below can be written down by hand.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.approximators import ValueModel
from jaxgames.learning import farl
from jaxgames.learning.schedules import Schedule
from tests.helpers import sample_games

# values[player, board, action]
TABLE = jnp.array(
    [
        [[0.3, 0.1], [0.5, 0.7], [0.2, 0.9], [-0.4, 0.0]],
        [[0.6, 0.2], [-0.2, 0.4], [0.1, 0.3], [0.8, -0.5]],
        [[0.0, 0.0], [0.25, 0.5], [-0.1, 0.2], [0.4, 0.6]],
    ]
)

STUB = ValueModel(
    num_players=3,
    num_outputs=2,
    output="identity",
    init=lambda key: TABLE,
    init_scratch=lambda p: None,
    features=lambda s: jnp.zeros(1, jnp.int32),
    afterstate_features=None,
    value=lambda params, player, f, action: params[player, f[0], action],
    update=None,
    describe=None,
)
GAME2 = jaxgames.make("tictactoe")


def state_of(mover: int, players: int = 2):
    rewards = jnp.zeros(players, jnp.float32)
    return GAME2.init(None).replace(current_player=jnp.int32(mover), rewards=rewards)


def memory(players, last, valid, pending, actions=None, elig=None):
    n = len(last)
    h = 0 if elig is None else elig[0].shape[1]
    elig_f, elig_a, elig_d, elig_v = (
        elig
        if elig is not None
        else (
            jnp.zeros((n, 0, 1), jnp.int32),
            jnp.zeros((n, 0), jnp.int32),
            jnp.zeros((n, 0)),
            jnp.zeros((n, 0), bool),
        )
    )
    del players, h
    return farl.Memory(
        last=jnp.asarray(last, jnp.int32)[:, None],
        last_action=jnp.zeros(n, jnp.int32) if actions is None else jnp.asarray(actions),
        last_valid=jnp.asarray(valid),
        elig=elig_f,
        elig_action=elig_a,
        elig_deriv=elig_d,
        elig_valid=elig_v,
        pending=jnp.asarray(pending, jnp.float32),
    )


def decision(after_board, rewards, done, value, best=None, action=0, random=False):
    """The chosen move: its value, and every move's (`best` on the move after `action`, the
    rest `value`: the best legal value for Q-learning when it is larger)."""
    after = GAME2.init(None).replace(
        rewards=jnp.asarray(rewards, jnp.float32), terminated=jnp.bool_(done)
    )
    values = jnp.full(GAME2.num_actions, value, jnp.float32)
    if best is not None:
        values = values.at[action + 1].set(best)
    return farl.Decision(
        jnp.int32(action),
        jnp.bool_(random),
        after,
        jnp.array([after_board], jnp.int32),
        jnp.float32(value),
        values,
    )


def spec(horizon=None, **kw):
    """FARL settings; `horizon` h through the cut lambda^(h - 1/2), which gives exactly h."""
    base = dict(kind="td", alpha=Schedule("constant", 1.0), epsilon=Schedule("constant", 0.0))
    if horizon is not None:
        base["horizon_cut"] = kw["lam"] ** (horizon - 0.5)
    config = farl.FarlConfig(**{**base, **kw})
    assert horizon is None or config.horizon == horizon
    return config


def mover_rows(s, mem, state, d, features=None):
    """`farl._mover_rows` for a deterministic game: it is over exactly when the afterstate is."""
    features = jnp.zeros(1, jnp.int32) if features is None else features
    return farl._mover_rows(STUB, s, TABLE, mem, state, features, d, d.after.terminated)


def test_td_links_the_movers_last_afterstate_to_its_new_one():
    mem = memory(2, last=[1, 2], valid=[True, True], pending=[0.0, 0.0])
    d = decision(after_board=3, rewards=[0, 0], done=False, value=0.45)
    hits, new, abs_delta, updated = mover_rows(spec(), mem, state_of(0), d)
    # target = 0 + 1.0 * V_0(new afterstate) = 0.45; V_0(board 1) = 0.5; delta = -0.05
    assert int(hits.player[0]) == 0 and int(hits.features[0, 0]) == 1 and bool(hits.valid[0])
    assert float(hits.signal[0]) == pytest.approx(-0.05)
    assert float(abs_delta) == pytest.approx(0.05) and bool(updated)
    assert int(new.last[0, 0]) == 3 and int(new.last[1, 0]) == 2  # only the mover's changes
    np.testing.assert_allclose(new.pending, [0.0, 0.0])


def test_td_game_end_gives_final_rewards_to_everyone():
    mem = memory(2, last=[1, 3], valid=[True, True], pending=[0.0, 0.0])
    d = decision(after_board=2, rewards=[1.0, -1.0], done=True, value=0.2)
    hits, *_ = mover_rows(spec(), mem, state_of(0), d)
    assert float(hits.signal[0]) == pytest.approx(1.0 - 0.5)  # mover: r, V(end) = 0
    final = farl._final_rows(STUB, spec(), TABLE, mem, state_of(0), jnp.zeros(1, jnp.int32), d)
    # rows: player 0 (the mover: not here), player 1 (FARL part 1), terminal afterstate (part 2)
    np.testing.assert_array_equal(final.valid, [False, True, True])
    assert int(final.player[1]) == 1 and int(final.features[1, 0]) == 3
    assert float(final.signal[1]) == pytest.approx(-1.0 - 0.8)  # V_1(board 3) = 0.8
    assert int(final.player[2]) == 0 and int(final.features[2, 0]) == 2
    assert float(final.signal[2]) == pytest.approx(0.0 - 0.2)


def test_td_bootstraps_on_zero_when_the_environment_ends_the_game():
    """2048: the afterstate of the last move is not terminal, the new tile makes the game over.
    The mover's previous afterstate then moves toward the reward alone (GBG: V(s_next) = 0
    when s_next, the state after the environment's answer, is game over)."""
    mem = memory(2, last=[1, 2], valid=[True, True], pending=[0.0, 0.0])
    d = decision(after_board=3, rewards=[0.3, 0.0], done=False, value=0.45)
    args = (STUB, spec(), TABLE, mem, state_of(0), jnp.zeros(1, jnp.int32), d)
    going_on, *_ = farl._mover_rows(*args, jnp.bool_(False))
    assert float(going_on.signal[0]) == pytest.approx(0.3 + 0.45 - 0.5)  # r + V(after) - V(1)
    ended, *_ = farl._mover_rows(*args, jnp.bool_(True))
    assert float(ended.signal[0]) == pytest.approx(0.3 - 0.5)  # r + 0 - V(board 1)


def test_no_farl_switches_both_parts_off():
    mem = memory(2, last=[1, 3], valid=[True, True], pending=[0.0, 0.0])
    d = decision(after_board=2, rewards=[1.0, -1.0], done=True, value=0.2)
    final = farl._final_rows(
        STUB,
        spec(farl_others=False, farl_terminal=False),
        TABLE,
        mem,
        state_of(0),
        jnp.zeros(1, jnp.int32),
        d,
    )
    assert not bool(final.valid.any())


def test_three_players_accumulate_pending_rewards():
    mem = memory(3, last=[1, 1, 2], valid=[True, True, True], pending=[0.0, 0.5, 0.0])
    d = decision(after_board=3, rewards=[0.2, 0.0, 1.0], done=True, value=0.1)
    hits, *_ = mover_rows(spec(), mem, state_of(1, 3), d)
    # mover 1: target = (0.5 + 0.0) + 0 = 0.5; V_1(board 1) = -0.2
    assert float(hits.signal[0]) == pytest.approx(0.7)
    final = farl._final_rows(STUB, spec(), TABLE, mem, state_of(1, 3), jnp.zeros(1, jnp.int32), d)
    np.testing.assert_array_equal(final.valid, [True, False, True, True])
    assert float(final.signal[0]) == pytest.approx(0.2 - 0.5)  # V_0(board 1) = 0.5
    assert float(final.signal[2]) == pytest.approx(1.0 - (-0.1))  # V_2(board 2) = -0.1


def test_random_moves_are_skipped_unless_learning_from_them():
    mem = memory(2, last=[1, 2], valid=[True, True], pending=[0.0, 0.0])
    d = decision(after_board=3, rewards=[0, 0], done=False, value=0.45, random=True)
    for learn, expected in ((True, True), (False, False)):
        s = spec(learn_from_random_moves=learn)
        hits, new, *_ = mover_rows(s, mem, state_of(0), d)
        assert bool(hits.valid[0]) == expected
        assert int(new.last[0, 0]) == 3  # the new board is remembered either way


def test_a_random_move_not_learned_from_clears_every_players_history_with_reset():
    """GBG's RESET (TDNTuple3Agt.adaptAgentV -> clearEligList): a random move that is not
    learned from clears the eligibility lists of all players; without RESET, or after a
    greedy move, they are kept (and a random move learned from cannot be combined with it)."""
    elig = (
        jnp.array([[[2]], [[3]]], jnp.int32),
        jnp.zeros((2, 1), jnp.int32),
        jnp.ones((2, 1)),
        jnp.ones((2, 1), bool),
    )
    mem = memory(2, last=[1, 2], valid=[True, True], pending=[0.0, 0.0], elig=elig)
    for random, reset, kept in ((True, True, False), (True, False, True), (False, True, True)):
        d = decision(after_board=3, rewards=[0, 0], done=False, value=0.45, random=random)
        s = spec(lam=0.5, horizon=2, learn_from_random_moves=False, reset_on_random=reset)
        hits, new, *_ = mover_rows(s, mem, state_of(0), d)
        assert bool(hits.valid[0]) == (not random)
        np.testing.assert_array_equal(new.elig_valid, [[kept], [kept]])
    with pytest.raises(ValueError, match="no effect while learn_from_random_moves"):
        spec(lam=0.5, horizon=2, reset_on_random=True)


def test_sarsa_and_q_targets():
    mem = memory(2, last=[1, 0], valid=[True, True], pending=[0.0, 0.0], actions=[1, 0])
    board_2 = jnp.array([2], jnp.int32)
    # SARSA: previous pair (board 1, action 1) -> Q_0 = 0.7; new pair value 0.9 (board 2, a 1)
    d = decision(after_board=0, rewards=[0, 0], done=False, value=0.9, action=1)
    hits, new, *_ = mover_rows(spec(kind="sarsa"), mem, state_of(0), d, board_2)
    assert float(hits.signal[0]) == pytest.approx(0.9 - 0.7)
    assert int(new.last[0, 0]) == 2 and int(new.last_action[0]) == 1
    # Q: the bootstrap is the best legal Q of the new state, whatever was played.
    d = decision(after_board=0, rewards=[0, 0], done=False, value=0.2, best=0.9, action=0)
    hits, *_ = mover_rows(spec(kind="q"), mem, state_of(0), d, board_2)
    assert float(hits.signal[0]) == pytest.approx(0.9 - 0.7)
    # The pair that ends a game moves toward that move's reward.
    d = decision(after_board=0, rewards=[1.0, -1.0], done=True, value=0.2, action=0)
    final = farl._final_rows(STUB, spec(kind="sarsa"), TABLE, mem, state_of(0), board_2, d)
    assert bool(final.valid[-1]) and float(final.signal[-1]) == pytest.approx(1.0 - 0.2)
    assert int(final.features[-1, 0]) == 2 and int(final.action[-1]) == 0


def test_eligibility_rows_share_the_error_with_lambda_powers():
    elig = (
        jnp.array([[[2], [3]], [[0], [0]]], jnp.int32),
        jnp.zeros((2, 2), jnp.int32),
        jnp.array([[0.5, 0.25], [1.0, 1.0]]),
        jnp.array([[True, True], [False, False]]),
    )
    mem = memory(2, last=[1, 0], valid=[True, True], pending=[0.0, 0.0], elig=elig)
    d = decision(after_board=3, rewards=[0, 0], done=False, value=0.9)
    s = spec(lam=0.5, horizon=3)
    hits, new, *_ = mover_rows(s, mem, state_of(0), d)
    delta = 0.9 - 0.5
    np.testing.assert_allclose(
        hits.signal, [delta, delta * 0.5 * 0.5, delta * 0.25 * 0.25], rtol=1e-6
    )
    np.testing.assert_array_equal(hits.features[:, 0], [1, 2, 3])
    # The updated board (1) joins the history at the front; the oldest (3) drops out.
    np.testing.assert_array_equal(new.elig[0, :, 0], [1, 2])
    assert float(new.elig_deriv[0, 0]) == pytest.approx(1.0)


# The same table read through a tanh output: sigma'(v) = 1 - v^2 of each board's value.
TANH_STUB = dataclasses.replace(STUB, output="tanh")


def test_eligibility_rows_move_by_their_own_slope_with_a_tanh_output():
    """GBG (NTuple2ValueFunc.update): history board k moves by delta * lambda^k * sigma'_k,
    sigma'_k its slope when it was updated; the last board's slope is not applied again."""
    elig = (
        jnp.array([[[2], [3]], [[0], [0]]], jnp.int32),
        jnp.zeros((2, 2), jnp.int32),
        jnp.array([[0.5, 0.25], [1.0, 1.0]]),  # sigma' of boards 2 and 3 when updated
        jnp.array([[True, True], [False, False]]),
    )
    mem = memory(2, last=[1, 0], valid=[True, True], pending=[0.0, 0.0], elig=elig)
    d = decision(after_board=3, rewards=[0, 0], done=False, value=0.9)
    s = spec(lam=0.5, horizon=3)
    features = jnp.zeros(1, jnp.int32)
    hits, new, *_ = farl._mover_rows(
        TANH_STUB, s, TABLE, mem, state_of(0), features, d, jnp.bool_(False)
    )
    # V_0(board 1) = 0.5: delta = 0.9 - 0.5 = 0.4, sigma' = 1 - 0.25 = 0.75
    np.testing.assert_allclose(hits.signal, [0.4 * 0.75, 0.4 * 0.5 * 0.5, 0.4 * 0.25 * 0.25])
    assert float(new.elig_deriv[0, 0]) == pytest.approx(0.75)  # board 1's slope, kept
    # FARL part 1 rows of the other player: its history by its own slopes too.
    elig = tuple(x[::-1] for x in elig)  # the same history, now player 1's
    mem = memory(2, last=[0, 1], valid=[True, True], pending=[0.0, 0.0], elig=elig)
    d = decision(after_board=2, rewards=[1.0, -1.0], done=True, value=0.2)
    final = farl._final_rows(TANH_STUB, s, TABLE, mem, state_of(0), features, d)
    # player 1's last board 1: V_1 = -0.2, delta = -1 - (-0.2) = -0.8, sigma' = 0.96
    delta, slope = -0.8, 1 - 0.2**2
    np.testing.assert_allclose(
        final.signal[3:6], [delta * slope, delta * 0.5 * 0.5, delta * 0.25 * 0.25], rtol=1e-6
    )
    np.testing.assert_array_equal(final.valid[3:6], [True, True, True])


def test_an_eligibility_update_moves_the_history_weights_by_hand_computed_steps():
    """Through a real tanh n-tuple table: one TD error moves the last board's weight by
    alpha * delta * sigma'(v_last) and board k of the history by alpha * delta * lambda^k *
    sigma'_k (one tuple, no symmetries: step_scale 1, every board reads its own entry)."""
    from jaxgames.approximators import ntuple

    game = jaxgames.make("tictactoe")
    net = ntuple.make_ntuple(game.board_spec, [list(range(9))], 1, symmetries=False)
    boards = [[1, 0, 0, 0, 0, 0, 0, 0, 0], [1, 2, 0, 0, 0, 0, 0, 0, 0]]
    boards.append([1, 2, 1, 0, 0, 0, 0, 0, 0])
    idx = jnp.stack([ntuple.indices(net, jnp.array(b)) for b in boards])
    params = ntuple.init(net)
    start = jnp.array([0.3, -0.6, 0.9])  # pre-activations of the three boards
    params["w"] = params["w"].at[idx[:, 0]].set(start)
    v_last = float(jnp.tanh(start[0]))
    slopes = jnp.array([0.36, 0.64])  # sigma' of the history boards when they were updated
    delta, lam, alpha = 0.7 - v_last, 0.5, 0.25
    row = (idx[0], jnp.int32(0), idx[1:], jnp.zeros(2, jnp.int32), slopes, jnp.ones(2, bool))
    lam_k = lam ** jnp.arange(1, 3, dtype=jnp.float32)
    hits = farl._board_rows(
        jnp.int32(0), jnp.float32(delta), jnp.float32(1 - v_last**2), jnp.bool_(True), row, lam_k
    )
    new, _ = ntuple.update(net, params, hits, jnp.float32(alpha), ntuple.init_counts(net))
    moved = np.asarray(new["w"][idx[:, 0]] - start)
    want = [alpha * delta * (1 - v_last**2), alpha * delta * lam * 0.36]
    want.append(alpha * delta * lam**2 * 0.64)
    np.testing.assert_allclose(moved, want, rtol=1e-5)


def test_farl_settings_reject_bad_values():
    with pytest.raises(ValueError, match="kind 'mc'"):
        farl.FarlConfig(kind="mc")
    with pytest.raises(ValueError, match=r"horizon_cut=0\.0"):
        farl.FarlConfig(lam=0.5, horizon_cut=0.0)
    with pytest.raises(ValueError, match=r"lam=1\.0"):
        farl.FarlConfig(lam=1.0)


def _othello_learner(games: int = 512):
    from jaxgames import presets
    from jaxgames.builders import make_learner

    config = presets.load("othello-td-farl")
    train = dataclasses.replace(config.train, batch_size=32, games=games, chunk_steps=8)
    return make_learner(dataclasses.replace(config, train=train))


def test_legal_moves_alone_are_valued_like_every_move_in_several_passes():
    """Othello TD values the legal moves only, in passes over the batch's (game, move) pairs;
    with 1 slot per game every batch takes several passes. Same scores, rewards and ends as
    valuing all 65 afterstates of every game."""
    learner = _othello_learner()
    game, model, spec = learner.game, learner.model, learner.settings
    assert farl.compact_slots(game, model, spec) > 0
    # mid-game positions, some with many moves (the conformance suite's compiled driver)
    _, games = sample_games(game, jax.random.key(0))
    states = jax.tree.map(lambda x: x[:, 16], games)
    features = jax.jit(jax.vmap(model.features))(states)
    params = learner.init(jax.random.key(0)).params
    w = jax.random.uniform(jax.random.key(1), params["w"].shape, minval=-0.2, maxval=0.2)
    params = {**params, "w": w}
    legal = np.asarray(states.legal_action_mask)
    assert legal.sum(-1).max() > 1
    every = jax.jit(
        jax.vmap(functools.partial(farl.all_action_scores, game, model, spec), (None, 0, 0))
    )
    scores, values, after, _ = every(params, states, features)
    # 1 slot per game: several passes per batch (training's 16 slots take one pass here)
    legal_scores = jax.jit(farl.legal_action_scores, static_argnums=(0, 1, 2, 5))
    got = legal_scores(game, model, spec, params, states, 1)
    np.testing.assert_allclose(np.asarray(got.scores)[legal], np.asarray(scores)[legal], atol=1e-6)
    np.testing.assert_allclose(np.asarray(got.values)[legal], np.asarray(values)[legal], atol=1e-6)
    np.testing.assert_array_equal(np.asarray(got.rewards)[legal], np.asarray(after.rewards)[legal])
    np.testing.assert_array_equal(
        np.asarray(got.terminated)[legal], np.asarray(after.terminated)[legal]
    )
    assert not np.asarray(got.scores)[~legal].any(), "illegal moves stay unvalued"


@pytest.mark.slow  # two Othello training programs to compile: 70-100 s
def test_training_on_legal_moves_alone_learns_the_same_weights(monkeypatch):
    """A few hundred Othello self-play games train to the same weights whether each step
    values the legal moves alone or every move."""
    learner = _othello_learner()
    compact, _ = learner.chunk(learner.init(jax.random.key(3)))
    monkeypatch.setattr(farl, "COMPACT_SLOTS", 1000)  # more than 65 / 2: value every move
    every = _othello_learner()
    assert farl.compact_slots(every.game, every.model, every.settings) == 0
    full, _ = every.chunk(every.init(jax.random.key(3)))
    assert int(compact.moves) == int(full.moves) > 0
    np.testing.assert_array_equal(np.asarray(compact.states.board), np.asarray(full.states.board))
    np.testing.assert_allclose(
        np.asarray(compact.params["w"]), np.asarray(full.params["w"]), atol=1e-6
    )


def _grouped_learner(sub_batch: int, batch: int = 8, preset: str = "tictactoe-td-farl", **algo):
    from jaxgames import presets
    from jaxgames.builders import make_learner

    config = presets.load(preset)
    algo = dataclasses.replace(config.algorithm, lam=0.5, sub_batch=sub_batch, **algo)
    train = dataclasses.replace(config.train, batch_size=batch, chunk_steps=3)
    # the eight lines of three, not the preset's whole board: boards share LUT entries, so the
    # order of updates shows in the weights
    lines = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]]
    approx = dataclasses.replace(config.approximator, tuples=lines)
    config = dataclasses.replace(config, algorithm=algo, train=train, approximator=approx)
    return make_learner(config)


def _decided_carry(learner, chunks: int):
    """A carry after `chunks` training chunks with random non-zero weights (so that each
    group's errors depend on the groups before it), and its B games' decisions (epsilon 0.3)."""
    game, model, spec = learner.game, learner.model, learner.settings
    carry = learner.init(jax.random.key(4))
    for _ in range(chunks):
        carry, _ = learner.chunk(carry)
    w = jax.random.uniform(jax.random.key(2), carry.params["w"].shape, minval=-0.5, maxval=0.5)
    carry = carry._replace(params={**carry.params, "w": w})
    # jitted: eager, each of its ~400 primitives would be compiled on its own
    decide = jax.jit(
        jax.vmap(farl._decide, in_axes=(None, None, None, None, 0, 0, None, 0)),
        static_argnums=(0, 1, 2),
    )
    keys = jax.random.split(jax.random.key(3), carry.states.current_player.shape[0])
    return carry, decide(game, model, spec, carry.params, carry.states, carry.features, 0.3, keys)


def _groups_one_by_one(learner, carry, d, alpha, retarget=None, size=4):
    """What `_grouped_updates` must give: for each slice of `size` games in turn, one update of
    its `_mover_rows` and the `_final_rows` of its first ended game, then one more update per
    further ended game of the slice (a final chunk of one), all from the weights the slices
    before it left; `retarget(params, states, features, d)`, where given, first replaces the
    slice's decisions. Returns (params, scratch, memory)."""
    model, spec = learner.model, learner.settings
    done = d.after.terminated
    movers_rows = jax.jit(farl._movers_rows, static_argnums=(0, 1))
    final_rows = jax.jit(farl._games_final_rows, static_argnums=(0, 1))
    update = jax.jit(lambda p, s, hits, a: model.update(p, s, hits, a))
    concat = lambda *rows: jax.tree.map(lambda *x: jnp.concatenate(x), *rows)
    params, scratch, memories = carry.params, carry.scratch, []
    for g in range(done.shape[0] // size):
        part = lambda x, g=g: x[size * g : size * g + size]
        memory_g, states_g, features_g, d_g = jax.tree.map(
            part, (carry.memory, carry.states, carry.features, d)
        )
        if retarget is not None:
            d_g = retarget(params, states_g, features_g, d_g)
        done_g = part(done)
        hits, mem, _, _ = movers_rows(
            model, spec, params, memory_g, states_g, features_g, d_g, done_g
        )
        rows = [farl._flat(hits)]
        for i in np.flatnonzero(np.asarray(done_g)):
            one = lambda x, i=i: x[i : i + 1]
            per_game = (memory_g, states_g, features_g, d_g)
            final = farl._flat(final_rows(model, spec, params, *jax.tree.map(one, per_game)))
            params, scratch = update(params, scratch, concat(*rows, final), alpha)
            rows = []
        if rows:  # no game of the group ended
            params, scratch = update(params, scratch, rows[0], alpha)
        memories.append(mem)
    return params, scratch, jax.tree.map(lambda *m: jnp.concatenate(m), *memories)


def test_sub_batches_update_one_after_another_from_the_weights_before_them():
    """With sub_batch S a step's update is B / S updates in a row, group g's errors computed
    from the weights groups 0 .. g-1 left, each group updating as a batch of S games does:
    the same weights and histories as applying, for each slice of S games in turn, one update
    of its `_mover_rows` and the `_final_rows` of its first ended game (S / 8 rounds up to
    one), then one more update per further ended game of the slice (lambda 0.5: histories of
    three boards; weights made non-zero first so that each group's errors depend on the last;
    a step in which games end in more than one group, two of them in one group)."""
    learner = _grouped_learner(4, 16)
    model, spec = learner.model, learner.settings
    carry, d = _decided_carry(learner, 3)  # games under way, histories
    done = d.after.terminated
    per_group = np.asarray(done).reshape(4, 4).sum(axis=1)
    assert np.sum(per_group > 0) > 1 and np.any(per_group == 2), per_group
    assert farl.final_chunk(4, spec) == 1
    alpha = jnp.float32(0.7)
    grouped = jax.jit(farl._grouped_updates, static_argnums=(0, 1, 6, 7))
    params, scratch, memory, _, updated = grouped(model, spec, carry, d, done, alpha, 4, 1)
    want_params, want_scratch, want_memory = _groups_one_by_one(learner, carry, d, alpha)
    # one program against several: the same sums up to float rounding
    close = functools.partial(np.testing.assert_allclose, rtol=1e-6, atol=1e-7)
    close(np.asarray(params["w"]), np.asarray(want_params["w"]))
    for got, want in zip(jax.tree.leaves(memory), jax.tree.leaves(want_memory), strict=True):
        close(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(scratch), np.asarray(want_scratch))  # hit tally
    assert int(updated.sum()) > 8
    together = grouped(model, spec, carry, d, done, alpha, 1, 1)[0]
    assert np.any(np.asarray(together["w"]) != np.asarray(params["w"])), "groups differ from one"


@pytest.mark.parametrize(
    "preset", ["tictactoe-td-farl", "tictactoe-sarsa-farl", "tictactoe-q-farl"]
)
def test_fresh_targets_read_each_groups_targets_from_the_weights_before_it(preset):
    """`fresh_targets`: group g's targets (TD: V of the chosen afterstate; SARSA: the chosen
    Q(s, a); Q: every action's Q(s, a), whose legal max is the target) are what the group's
    own states score with the weights groups 0 .. g-1 left (`all_action_scores`, the path the
    moves are chosen by), the moves unchanged; without it they are the step's first weights',
    and the weights differ."""
    learner = _grouped_learner(4, 16, preset, fresh_targets=True)
    game, model, spec = learner.game, learner.model, learner.settings
    # most movers have a previous board to update; a step in which later groups' targets read
    # many weights that earlier groups move (the gap below depends on the position: 1e-8 to
    # 6e-3 for Q-learning from 38 to 60 chunks)
    carry, d = _decided_carry(learner, 60)
    scores = jax.jit(
        jax.vmap(farl.all_action_scores, in_axes=(None, None, None, None, 0, 0)),
        static_argnums=(0, 1, 2),
    )

    def retarget(params, states, features, d_g):
        values = scores(game, model, spec, params, states, features)[1]
        value = jnp.take_along_axis(values, d_g.action[:, None], 1)[:, 0]
        return d_g._replace(value=value, values=values)

    alpha = jnp.float32(0.7)
    grouped = jax.jit(farl._grouped_updates, static_argnums=(0, 1, 6, 7))
    done = d.after.terminated
    params, scratch, memory, _, _ = grouped(model, spec, carry, d, done, alpha, 4, 1)
    want_params, want_scratch, want_memory = _groups_one_by_one(learner, carry, d, alpha, retarget)
    close = functools.partial(np.testing.assert_allclose, rtol=1e-6, atol=1e-7)
    close(np.asarray(params["w"]), np.asarray(want_params["w"]))
    for got, want in zip(jax.tree.leaves(memory), jax.tree.leaves(want_memory), strict=True):
        close(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(scratch), np.asarray(want_scratch))
    stale_spec = dataclasses.replace(spec, fresh_targets=False)
    stale = grouped(model, stale_spec, carry, d, done, alpha, 4, 1)[0]
    gap = np.abs(np.asarray(stale["w"]) - np.asarray(params["w"])).max()
    assert gap > 1e-5, "the fresh targets changed nothing"
    with pytest.raises(ValueError, match="fresh_targets=true needs update groups"):
        dataclasses.replace(spec, sub_batch=0)


def test_interleaved_batches_move_and_learn_in_turn_from_the_newest_weights():
    """`lockstep.interleave(step_S, G, per_game)` on a carry of B = G * S games is the step of S
    games applied to each slice of S slots in turn, every slice's moves chosen from the
    weights the slice before it left (a learned carry, so that the weights matter; lambda 0.5:
    histories carried per game); its metrics are the slices' sums."""
    from jaxgames.learning import lockstep

    learner = _grouped_learner(0, 8)
    game, model, spec = learner.game, learner.model, learner.settings
    per_game = learner.definition.per_game
    carry = learner.init(jax.random.key(5))
    for _ in range(40):
        carry, _ = learner.chunk(carry)
    step = farl.make_step(game, model, spec, 4)
    got, metrics = jax.jit(lockstep.interleave(step, 2, per_game))(carry, None)
    shared, slices, per_step = carry, [], []
    for g in range(2):
        part = lambda x, g=g: x[4 * g : 4 * g + 4]
        fields = {name: jax.tree.map(part, getattr(carry, name)) for name in per_game}
        shared, m = jax.jit(step)(shared._replace(**fields), None)
        slices.append({name: getattr(shared, name) for name in per_game})
        per_step.append(m)
    joined = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), *slices)
    want = shared._replace(**joined)
    plain = lambda x: (
        jax.random.key_data(x) if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key) else x
    )
    # one program against several: the same sums up to float rounding
    close = functools.partial(np.testing.assert_allclose, rtol=1e-6, atol=1e-7)
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        close(np.asarray(plain(a)), np.asarray(plain(b)))
    summed = jax.tree.map(lambda a, b: a + b, *per_step)
    for a, b in zip(jax.tree.leaves(metrics), jax.tree.leaves(summed), strict=True):
        close(np.asarray(a), np.asarray(b))
    assert int(metrics.stats.moves) == 8 and int(metrics.updates) > 0
    with pytest.raises(ValueError, match="groups=3 does not divide the carry's 8 games"):
        lockstep.interleave(step, 3, per_game)(carry, None)
    with pytest.raises(ValueError, match=r"groups=0: expected >= 1"):
        lockstep.interleave(step, 0, per_game)


def test_sub_batch_must_divide_the_batch():
    with pytest.raises(ValueError, match="sub_batch=3 does not divide batch_size=8"):
        _grouped_learner(3)
    with pytest.raises(ValueError, match=r"sub_batch=-1: expected >= 0"):
        farl.FarlConfig(sub_batch=-1)
    whole = _grouped_learner(8)  # sub_batch >= B: one update, the default step
    assert farl.update_groups(whole.settings, 8) == 1


def _has_while(learner) -> bool:
    carry = jax.eval_shape(learner.init, jax.random.key(0))
    return "while[" in str(jax.make_jaxpr(learner.chunk)(carry))


def test_final_games_of_the_whole_batch_leave_no_loop_in_the_step():
    """By default an update takes the final rows of B / 8 ended games, and a loop whose length
    depends on the data takes the rest; `final_games >= B` takes every game in the one update,
    so the step has no while loop (TicTacToe n-tuples: incremental features, no passes over
    legal moves). With sub-batches of S the same holds per group, with S for B."""
    from jaxgames import presets
    from jaxgames.builders import make_learner

    config = presets.load("tictactoe-td-farl")
    config = dataclasses.replace(config, train=dataclasses.replace(config.train, batch_size=16))
    assert _has_while(make_learner(config))
    assert farl.final_chunk(16, config.algorithm) == 2
    whole = dataclasses.replace(config.algorithm, final_games=16)
    assert farl.final_chunk(16, whole) == 16
    assert not _has_while(make_learner(dataclasses.replace(config, algorithm=whole)))
    # with sub-batches each group's update takes its own ended games: S of them, no loop
    grouped = _grouped_learner(4, 16)
    assert _has_while(grouped)
    algo = dataclasses.replace(grouped.config.algorithm, final_games=4)
    assert not _has_while(make_learner(dataclasses.replace(grouped.config, algorithm=algo)))
    with pytest.raises(ValueError, match=r"final_games=-2: expected >= 0"):
        farl.FarlConfig(final_games=-2)
