"""The conformance suite every registered game passes: API, dtypes, jit/vmap, absorbing ends."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxgames
from jaxgames import core
from jaxgames.registry import resolve_options
from tests.helpers import (
    GAME_VARIANTS,
    batched_step,
    jit_step,
    max_game_length,
    random_games,
    sample_games,
    variant_id,
)

VARIANTS = pytest.mark.parametrize("variant", GAME_VARIANTS, ids=variant_id)


def make(variant) -> jaxgames.Game:
    name, options = variant
    return jaxgames.make(name, **options)


def assert_state_types(game: jaxgames.Game, state: core.State, batch: tuple[int, ...] = ()):
    board_dtype = jnp.int8
    chex.assert_shape(state.board, (*batch, *game.board_shape))
    chex.assert_type(state.board, board_dtype)
    chex.assert_shape(state.current_player, batch)
    chex.assert_type(state.current_player, jnp.int32)
    chex.assert_shape(state.legal_action_mask, (*batch, game.num_actions))
    chex.assert_type(state.legal_action_mask, jnp.bool_)
    chex.assert_shape(state.rewards, (*batch, game.num_players))
    chex.assert_type(state.rewards, jnp.float32)
    chex.assert_shape(state.terminated, batch)
    chex.assert_type(state.terminated, jnp.bool_)
    chex.assert_shape(state.step_count, batch)
    chex.assert_type(state.step_count, jnp.int32)


@VARIANTS
def test_init_follows_the_conventions(variant):
    game = make(variant)
    state = game.init(jax.random.key(0))
    assert_state_types(game, state)
    assert int(state.current_player) == 0
    assert not bool(state.terminated)
    assert int(state.step_count) == 0
    assert bool(jnp.any(state.legal_action_mask))
    np.testing.assert_array_equal(state.rewards, 0.0)
    assert len(game.action_names) == game.num_actions
    assert isinstance(game.render(state), str)


@VARIANTS
def test_random_play_unbatched_equals_jit_vmap(variant):
    """One game played move by move (eagerly for short games; with a jitted unbatched step for
    long ones)
    equals the same game inside jit(vmap(scan))."""
    game = make(variant)
    length = max_game_length(game) + 2
    long_game = length > 40
    step = jit_step(game) if long_game else game.step
    actions, states = sample_games(game, jax.random.key(1))
    host = jax.device_get(states)  # the expected states, read on the host (no dispatches)
    game_keys = jax.random.split(jax.random.key(1), actions.shape[0])
    for g in range(2 if long_game else 3):  # long games: two, each move compared
        # the keys `random_games` used, so that chance (2048's tiles) is replayed too
        init_key, scan_key = jax.random.split(game_keys[g])
        step_keys = jax.jit(jax.vmap(lambda k: jax.random.split(k, 4)[3]))(
            jax.random.split(scan_key, length)
        )
        state, after_end = game.init(init_key), 0
        for t in range(length):
            state = step(state, actions[g, t], step_keys[t])
            expected = jax.tree.map(lambda x, g=g, t=t: x[g, t], host)
            chex.assert_trees_all_equal(state, expected)
            after_end += bool(state.terminated)
            if after_end > 2:  # the end and two absorbed moves after it
                break
        assert bool(state.terminated), "a random game did not end within the length bound"


@VARIANTS
def test_batched_step_equals_stacked_unbatched(variant):
    game = make(variant)
    _, states = sample_games(game, jax.random.key(2))
    # every sample game's position after two moves: the batch shape the other suites step
    # (one compiled program); the first 8 are compared with the unbatched step
    mid = jax.tree.map(lambda x: x[:, 2], states)
    actions = core.sample_legal(jax.random.key(3), mid.legal_action_mask)
    keys = jax.random.split(jax.random.key(4), actions.shape[0])
    batched = batched_step(game)(mid, actions, keys)
    assert_state_types(game, batched, actions.shape)
    host_mid, host_batched = jax.device_get((mid, batched))
    for i in range(8):
        one = jax.tree.map(lambda x, i=i: x[i], host_mid)
        chex.assert_trees_all_equal(
            jit_step(game)(one, actions[i], keys[i]),
            jax.tree.map(lambda x, i=i: x[i], host_batched),
        )


@VARIANTS
def test_every_state_of_random_games_is_well_formed(variant):
    game = make(variant)
    _, states = random_games(game, 64, max_game_length(game) + 2, jax.random.key(5), 0.05)
    assert_state_types(game, states, states.terminated.shape)
    rewards = np.asarray(states.rewards)
    assert np.all(np.isfinite(rewards))
    done = np.asarray(states.terminated)
    assert not np.any(np.asarray(states.legal_action_mask)[done]), "terminal states have moves"
    assert np.all(np.any(np.asarray(states.legal_action_mask)[~done], axis=-1))
    assert np.all(done[:, -1]), "games must end within the length bound"
    ended_now = done & ~np.concatenate([np.zeros_like(done[:, :1]), done[:, :-1]], axis=1)
    if game.num_players == 1:  # 2048: every move earns its merges; nothing after the end
        after_end = done & ~ended_now
        assert np.all(rewards >= 0.0) and np.all(rewards[after_end] == 0.0)
    else:  # rewards arrive only on the move that ends the game
        assert np.all(rewards[~ended_now] == 0.0)


@VARIANTS
def test_terminal_states_absorb(variant):
    game = make(variant)
    _, states = sample_games(game, jax.random.key(6))
    final = jax.tree.map(lambda x: x[:, -1], states)
    assert bool(jnp.all(final.terminated))
    keys = jax.random.split(jax.random.key(0), final.terminated.shape[0])
    for action in (0, game.num_actions - 1, -3, game.num_actions + 5):
        actions = jnp.full(final.terminated.shape, action, jnp.int32)
        after = batched_step(game)(final, actions, keys)
        chex.assert_trees_all_equal(after, final.replace(rewards=jnp.zeros_like(final.rewards)))


@VARIANTS
def test_observe_gives_finite_planes_for_every_player(variant):
    game = make(variant)
    _, states = sample_games(game, jax.random.key(8))
    states = jax.tree.map(lambda x: x[:4], states)
    state = jax.tree.map(lambda x: x[0, 3], states)
    shapes = set()
    for player in range(game.num_players):
        planes = jax.jit(game.observe)(state, jnp.int32(player))
        assert np.all(np.isfinite(np.asarray(planes, np.float32)))
        shapes.add(planes.shape)
    assert len(shapes) == 1
    batched = jax.vmap(game.observe)(
        jax.tree.map(lambda x: x[:, 0], states), jnp.zeros(4, jnp.int32)
    )
    assert batched.shape == (4, *shapes.pop())


@VARIANTS
def test_afterstate_and_chance_split_the_step(variant):
    game = make(variant)
    _, states = sample_games(game, jax.random.key(9))
    state = jax.tree.map(lambda x: x[:, 1], states)
    actions = core.sample_legal(jax.random.key(10), state.legal_action_mask)
    keys = jax.random.split(jax.random.key(11), actions.shape[0])
    stepped = batched_step(game)(state, actions, keys)
    split = jax.jit(lambda s, a, k: jax.vmap(game.chance)(jax.vmap(game.afterstate)(s, a), k))(
        state, actions, keys
    )
    chex.assert_trees_all_equal(stepped, split)


@VARIANTS
def test_nothing_retraces(variant):
    game = make(variant)
    chex.clear_trace_counter()

    @jax.jit
    @chex.assert_max_traces(n=1)
    def step(state, action, key):
        return game.step(state, action, key)

    _, states = sample_games(game, jax.random.key(12))
    for t in range(min(6, max_game_length(game))):
        state = jax.tree.map(lambda x, t=t: x[0, t], states)
        step(state, jnp.int32(t % game.num_actions), jax.random.key(t))
    chex.clear_trace_counter()


@VARIANTS
def test_make_is_cached_and_game_is_hashable(variant):
    name, options = variant
    game = jaxgames.make(name, **options)
    assert jaxgames.make(name, **options) is game
    assert hash(game) == hash(jaxgames.make(name, **options))
    assert game.name == name


@VARIANTS
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), depth=st.integers(0, 40), action=st.integers(-2, 100))
def test_mask_agrees_with_what_step_accepts(variant, seed, depth, action):
    """A legal action changes the board and keeps the game going or ends it with a result; an
    action outside the mask forfeits: board unchanged, game over, the mover scored as loser."""
    game = make(variant)
    length = max_game_length(game)
    _, states = sample_games(game, jax.random.key(seed))
    t = min(depth, length - 1)
    state = jax.tree.map(lambda x: x[0, t], states)
    if bool(state.terminated):
        return
    action = action % (game.num_actions + 2) - 1  # covers -1 and num_actions
    nxt = jit_step(game)(state, jnp.int32(action), jax.random.key(seed))
    legal = 0 <= action < game.num_actions and bool(state.legal_action_mask[action])
    board_changed = not np.array_equal(nxt.board, state.board)
    assert board_changed == legal
    assert int(nxt.step_count) == int(state.step_count) + 1
    if not legal:
        assert bool(nxt.terminated)
        mover = int(state.current_player)
        if game.num_players == 1:  # the game ends without reward
            assert float(nxt.rewards[0]) == 0.0
            return
        assert float(nxt.rewards[mover]) == float(jnp.min(nxt.rewards))
        assert float(nxt.rewards[mover]) < float(jnp.max(nxt.rewards))


@VARIANTS
def test_stones_and_items_are_conserved(variant):
    """Placement games: stones on the board == moves (Othello: 4 + discs placed); heap games:
    items removed == taken."""
    game = make(variant)
    actions, states = sample_games(game, jax.random.key(13))
    boards = np.asarray(states.board).astype(np.int64)
    steps = np.asarray(states.step_count)
    done_before = np.concatenate(
        [np.zeros_like(steps[:, :1], bool), np.asarray(states.terminated)[:, :-1]], axis=1
    )
    if game.name == "2048":  # merges keep the tile sum; each live move adds a 2 or a 4
        total = np.where(boards > 0, 2**boards, 0).reshape(*boards.shape[:2], -1).sum(-1)
        added = np.diff(np.concatenate([np.full_like(total[:, :1], -1), total], 1), axis=1)
        live = ~done_before & (steps > 0)
        assert np.all(np.isin(added[:, 1:][live[:, 1:]], [2, 4]))
        assert np.all(np.isin(total[:, 0], [6, 8, 10, 12]))  # two start tiles and one new
    elif game.name == "othello":  # flips move discs between players; a pass places none
        placed = np.cumsum(~done_before & (np.asarray(actions) != 64), axis=1)
        stones = (boards != 0).reshape(*boards.shape[:2], -1).sum(-1)
        np.testing.assert_array_equal(stones, 4 + placed)
    elif game.name in ("nim", "nim3p"):
        opts = dict(game.options)
        max_take = opts.get("max_take", opts["size"])
        taken = np.cumsum(np.where(done_before, 0, np.asarray(actions) % max_take + 1), axis=1)
        remaining = opts["heaps"] * opts["size"] - taken
        np.testing.assert_array_equal(boards.sum(axis=-1), remaining)
    else:
        stones = (boards != 0).reshape(*boards.shape[:2], -1).sum(-1)
        np.testing.assert_array_equal(stones, steps)
        for p in range(game.num_players):
            own = (boards == p + 1).reshape(*boards.shape[:2], -1).sum(-1)
            np.testing.assert_array_equal(
                own, (steps + game.num_players - 1 - p) // game.num_players
            )


@pytest.mark.parametrize("variant", GAME_VARIANTS, ids=variant_id)
def test_the_record_states_a_length_bound_a_version_and_its_options(variant):
    """The registry stamps the resolved options on the record; `max_moves` is the bound that
    random games are played to in the well-formedness test above (every game ends within
    it; 2048's bound is arithmetic, see its module)."""
    name, options = variant
    game = jaxgames.make(name, **options)
    assert game.max_moves >= 1 and game.version >= 1
    assert dict(game.options) == resolve_options(name, options)
    assert max_game_length(game) == (400 if name == "2048" else game.max_moves)
    assert jaxgames.make(name, **options) is game  # one record per option set
