"""Our games through pgx's Env interface (`jaxgames.interop.to_pgx`).

pgx's own API checks (`pgx.api_test`) run on every game; and where pgx has the same game
(Tic-Tac-Toe, Connect Four, Othello, Hex 11x11 apart from its swap move) thousands of lockstep
random games are played in pgx's environment and in ours from the same keys with the same
actions, and every field pgx defines must agree at every step.
"""

from __future__ import annotations

import typing

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from tests.helpers import variant_id

pgx = pytest.importorskip("pgx")
api_test_module = pytest.importorskip("pgx._src.api_test")

from jaxgames.interop import to_pgx  # noqa: E402

FIELDS = ("current_player", "observation", "rewards", "terminated", "legal_action_mask")
# Tic-Tac-Toe, Connect Four and Othello are compared with pgx's own environments field by field
# and dtype by dtype (below), whose states pass these checks; the rest run pgx's checks here
API_VARIANTS = [
    ("2048", {}),
    ("hex", {}),
    ("hex", {"size": 11}),
    ("nim", {}),
    ("nim3p", {}),
    ("connect_four", {"rows": 6, "cols": 8}),
]


@pytest.mark.parametrize("variant", API_VARIANTS, ids=variant_id)
def test_pgx_api_checks_pass(variant, monkeypatch):
    name, options = variant
    env = to_pgx(name, **options)
    assert isinstance(env, pgx.Env)
    # pgx's checks assert that the id is one of pgx's; ours (Nim, other sizes) are added
    ids = typing.get_args(pgx.EnvId)
    if env.id not in ids:
        monkeypatch.setattr(api_test_module, "EnvId", typing.Literal[(*ids, env.id)])
    # pgx.api_test = api_test_single + api_test_batch; the single-game driver fails on pgx's
    # own games with pgx 2.6 (its act_randomly samples along axis 1 of an unbatched mask), so
    # it is replayed here with pgx's per-state validators and a batch of one for the action
    api_test_module.api_test_batch(env, num=3, use_key=True)
    init, step = jax.jit(env.init), jax.jit(env.step)
    act = jax.jit(lambda key, mask: api_test_module.act_randomly(key, mask[None])[0])
    key = jax.random.key(849020)
    for _ in range(3):
        key, sub = jax.random.split(key)
        state = init(sub)
        assert state.env_id == env.id and state.legal_action_mask.sum() != 0
        assert state._step_count == 0
        api_test_module._validate_init_reward(state)
        for count in range(1, 100_000):
            api_test_module._validate_state(state)
            api_test_module._validate_current_player(state)
            api_test_module._validate_legal_actions(state)
            if state.terminated:
                break
            key, k_act, k_step = jax.random.split(key, 3)
            state = step(state, act(k_act, state.legal_action_mask), k_step)
            assert state._step_count == count
        # a step on a finished game: the same state, zero rewards
        again = step(state, jnp.int32(0), key)
        assert not again.rewards.any() and bool(again.terminated)
        np.testing.assert_array_equal(again._x.board, state._x.board)


def _lockstep(pgx_id, ours, num_games, illegal_every=0, mask_width=None, seed=0):
    """Plays random games in pgx's env and ours from the same keys and actions; returns the
    (pgx, ours) state of every step as NumPy dicts [T, B, ...]."""
    theirs = pgx.make(pgx_id)
    envs = [theirs, ours]
    inits = [jax.jit(jax.vmap(e.init)) for e in envs]
    steps = [jax.jit(jax.vmap(e.step)) for e in envs]
    keys = jax.random.split(jax.random.key(seed), num_games)
    states = [init(keys) for init in inits]
    rng = np.random.default_rng(seed)
    history = []
    for t in range(1000):
        history.append([{f: np.asarray(getattr(s, f)) for f in FIELDS} for s in states])
        if all(bool(s.terminated.all()) for s in states):
            break
        mask = np.asarray(states[0].legal_action_mask)[:, :mask_width]
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask], np.int32)
        if illegal_every and t % illegal_every == illegal_every - 1:
            actions[: num_games // 4] = rng.integers(0, mask.shape[1], num_games // 4)
        states = [step(s, jnp.asarray(actions)) for step, s in zip(steps, states, strict=True)]
    return history


@pytest.mark.parametrize(
    ("pgx_id", "name", "options"),
    [
        ("tic_tac_toe", "tictactoe", {}),
        ("connect_four", "connect_four", {}),
        ("othello", "othello", {}),
    ],
)
def test_same_games_as_pgx_step_for_step(pgx_id, name, options):
    env = to_pgx(name, **options)
    assert env.id == pgx_id and env.num_actions == pgx.make(pgx_id).num_actions
    history = _lockstep(pgx_id, env, num_games=256)
    ours_prev = theirs_prev = np.zeros(256, bool)  # ended before this step
    total = np.zeros((2, 256, 2))
    for t, (theirs, ours) in enumerate(history):
        # pgx's Othello makes both players pass before it ends a game that neither can go
        # on with; ours ends it at once (two moves earlier), with the same result (the
        # totals below)
        now = ours["terminated"] & theirs["terminated"] & ~ours_prev & ~theirs_prev
        late = ours["terminated"] & ~theirs_prev & ~now
        if pgx_id == "othello":
            waiting = late & ~theirs["terminated"]
            assert np.all(theirs["legal_action_mask"][waiting, 64]), t  # only the pass
            assert not np.any(history[max(t - 2, 0)][1]["terminated"][waiting]), t  # 2 passes
        else:
            assert not late.any(), t
        for f in FIELDS:
            assert theirs[f].dtype == ours[f].dtype, (f, theirs[f].dtype, ours[f].dtype)
            same = (theirs[f] == ours[f]).reshape(256, -1).all(axis=1) | late
            assert same.all(), (f, t, np.flatnonzero(~same)[:5])
        total += [theirs["rewards"], ours["rewards"]]
        ours_prev, theirs_prev = ours["terminated"], theirs["terminated"]
    np.testing.assert_array_equal(total[0], total[1])
    assert np.abs(total[1]).sum() > 0  # some games were won


def test_illegal_actions_end_the_game_as_in_pgx():
    # pgx's own games apply an illegal move's rule anyway; ours leave the board as it was,
    # so the last observation may differ; everything else must not
    history = _lockstep("tic_tac_toe", to_pgx("tictactoe"), num_games=256, illegal_every=2)
    forfeits = 0
    for theirs, ours in history:
        for f in FIELDS[:1] + FIELDS[2:]:
            np.testing.assert_array_equal(theirs[f], ours[f], err_msg=f)
        forfeits += int((ours["rewards"] == -1).any(axis=1).sum())
    assert forfeits > 20


def test_hex_11_agrees_with_pgx_hex_without_its_swap_move():
    env = to_pgx("hex", size=11)
    assert env.id == "jaxgames/hex(size=11)" and env.num_actions == 121
    history = _lockstep("hex", env, num_games=64, mask_width=121)
    assert len(history) > 60
    for theirs, ours in history:
        np.testing.assert_array_equal(
            theirs["legal_action_mask"][:, :121], ours["legal_action_mask"]
        )
        np.testing.assert_array_equal(theirs["observation"][..., :2], ours["observation"])
        for f in ("current_player", "rewards", "terminated"):
            np.testing.assert_array_equal(theirs[f], ours[f], err_msg=f)


def test_2048_actions_mean_what_pgx_means():
    env = to_pgx("2048")
    assert env.id == "2048" and env.observation_shape == pgx.make("2048").observation_shape
    state = jax.jit(env.init)(jax.random.key(3))
    one = jnp.zeros((4, 4), jnp.int8).at[1, 1].set(1)  # a single 2 in row 1, column 1
    x = state._x.replace(board=one, legal_action_mask=jnp.ones(4, bool))
    state = state.replace(_x=x, legal_action_mask=jnp.ones(4, bool))
    # pgx: 0 left, 1 up, 2 right, 3 down
    step = jax.jit(env.step)
    for action, cell in [(0, (1, 0)), (1, (0, 1)), (2, (1, 3)), (3, (3, 1))]:
        after = step(state, jnp.int32(action), jax.random.key(action))
        assert int(after._x.board[cell]) == 1, (action, np.asarray(after._x.board))
        expected = np.asarray(after._x.board).reshape(16)[:, None] == np.arange(31)
        np.testing.assert_array_equal(np.asarray(after.observation).reshape(16, 31), expected)
    with pytest.raises(ValueError, match="2048 is stochastic: pass a key"):
        env.step(state, jnp.int32(0))


def test_seats_and_rewards_follow_the_player_ids():
    env, fixed = to_pgx("connect_four"), to_pgx("connect_four", seat="fixed")
    keys = jax.random.split(jax.random.key(0), 64)
    firsts = np.asarray(jax.vmap(env.init)(keys).current_player)
    assert set(firsts.tolist()) == {0, 1}
    assert not np.asarray(jax.vmap(fixed.init)(keys).current_player).any()
    # the first player wins in four moves down column 0 (the other plays column 1)
    state, step = env.init(keys[int(np.flatnonzero(firsts == 1)[0])]), jax.jit(env.step)
    for action in [0, 1, 0, 1, 0, 1, 0]:
        state = step(state, jnp.int32(action))
    assert bool(state.terminated) and state.rewards.tolist() == [-1.0, 1.0]
    assert state.legal_action_mask.all()  # pgx: every action legal after the end


def test_svg_of_one_state_and_of_a_batch(tmp_path):
    env = to_pgx("othello")
    one = env.init(jax.random.key(0))
    assert one.to_svg().startswith("<svg") and one.to_svg().count("<circle") >= 4
    batch = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 3))
    svg = batch.to_svg()
    assert svg.count("<g transform") == 3
    batch.save_svg(tmp_path / "batch.svg")
    assert (tmp_path / "batch.svg").read_text() == svg


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="seat='left': expected one of random, fixed"):
        to_pgx("tictactoe", seat="left")
    with pytest.raises(ValueError, match=r"options \['size'\] given with a Game"):
        to_pgx(jaxgames.make("hex"), size=5)
    assert to_pgx("hex") is to_pgx(jaxgames.make("hex"))
