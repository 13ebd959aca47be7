"""The lockstep self-play driver and the sampling helpers it is built on."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import core, selfplay
from jaxgames.opponents import random_policy


def test_sample_legal_is_uniform_over_legal_actions():
    mask = jnp.array([True, False, True, True, False, True])
    draws = core.sample_legal(jax.random.key(0), jnp.broadcast_to(mask, (40_000, 6)))
    counts = np.bincount(np.asarray(draws), minlength=6)
    assert counts[~np.asarray(mask)].sum() == 0
    np.testing.assert_allclose(counts[np.asarray(mask)] / 40_000, 0.25, atol=0.01)


@pytest.mark.parametrize("num_actions", [1, 4, 9, 32, 33, 65, 121, 170])
def test_nth_true_is_the_kth_true_entry_in_index_order(num_actions):
    # up to 32 actions by a prefix count, beyond by packed words and population counts: both
    # must give the entry numbered (word mod count) among the True ones, and 0 for no entry
    rng = np.random.default_rng(num_actions)
    density = np.repeat([0.0, 0.03, 0.5, 1.0], 100)[:, None]
    mask = rng.random((400, num_actions)) < density
    mask[-1, -1] = True  # a last entry alone: the end of the last, partly filled word
    mask[-1, :-1] = False
    words = rng.integers(0, 2**32, 400, dtype=np.uint64).astype(np.uint32)
    nth_true = jax.jit(core.nth_true)  # one compiled call, not hundreds of eager ops
    got = np.asarray(nth_true(jnp.asarray(mask), jnp.asarray(words)))
    for row, word, index in zip(mask, words, got, strict=True):
        true = np.flatnonzero(row)
        assert index == (true[int(word) % len(true)] if len(true) else 0)
    batched = nth_true(jnp.ones((2, 3, num_actions), bool), jnp.full((2, 3), 7, jnp.uint32))
    assert batched.shape == (2, 3)
    np.testing.assert_array_equal(batched, 7 % num_actions)


def test_materialised_is_the_identity_on_non_negative_integers():
    x = jnp.array([0, 1, 2, 255, 2**24 + 1, 2**31 - 2], jnp.int32)
    np.testing.assert_array_equal(jax.jit(core.materialised)(x), x)
    rows = jnp.arange(256, dtype=jnp.uint8)
    np.testing.assert_array_equal(core.materialised(rows), rows)
    assert core.materialised(rows).dtype == jnp.uint8


def test_argmax_random_breaks_ties_uniformly_among_legal_maxima():
    values = jnp.array([3.0, 5.0, 5.0, 9.0, 5.0])
    mask = jnp.array([True, True, True, False, True])
    picks = core.argmax_random(
        jax.random.key(1),
        jnp.broadcast_to(values, (30_000, 5)),
        jnp.broadcast_to(mask, (30_000, 5)),
    )
    counts = np.bincount(np.asarray(picks), minlength=5)
    assert counts[0] == counts[3] == 0
    np.testing.assert_allclose(counts[[1, 2, 4]] / 30_000, 1 / 3, atol=0.015)


@pytest.mark.parametrize("name", ["tictactoe", "connect_four", "nim3p"])
def test_rollout_counts_agree_with_its_transitions(name):
    game = jaxgames.make(name)
    carry, tr = selfplay.rollout(game, random_policy, 64, 50, jax.random.key(2))
    stats = carry.stats
    ended = np.asarray(tr.terminated)
    rewards = np.asarray(tr.rewards)
    assert int(stats.moves) == 64 * 50
    assert int(stats.finished) == ended.sum() > 0
    assert int(stats.wins.sum() + stats.draws) == int(stats.finished)
    np.testing.assert_allclose(stats.reward_sum, rewards[ended].sum(0), rtol=1e-5)
    # Random play never forfeits: every game ends by the rules.
    assert np.all(np.asarray(carry.states.legal_action_mask).any(-1))


def test_finished_games_restart_in_place():
    game = jaxgames.make("tictactoe")
    _, tr = selfplay.rollout(game, random_policy, 32, 40, jax.random.key(3))
    ended = np.asarray(tr.terminated)
    boards = np.asarray(tr.board)
    players = np.asarray(tr.current_player)
    t, b = np.nonzero(ended[:-1])
    assert len(t) > 20
    assert np.all(boards[t + 1, b] == 0), "a game did not restart from the empty board"
    assert np.all(players[t + 1, b] == 0)
    # Untouched slots carry on: the board grows by exactly one stone per move.
    t, b = np.nonzero(~ended[:-1])
    stones = (boards != 0).reshape(40, 32, -1).sum(-1)
    np.testing.assert_array_equal(stones[t + 1, b], stones[t, b] + 1)


def test_rollout_compiles_once_per_configuration():
    game = jaxgames.make("nim")
    chex.clear_trace_counter()
    traced = []

    def policy(states, key):
        traced.append(1)
        return random_policy(states, key)

    for seed in range(3):
        selfplay.rollout(game, policy, 16, 8, jax.random.key(seed), record=False)
    assert len(traced) == 1


def test_lockstep_random_play_matches_known_statistics():
    """TicTacToe random play: first player wins 58.5%, second 28.8%, draws 12.7%."""
    game = jaxgames.make("tictactoe")
    carry, _ = selfplay.rollout(game, random_policy, 2048, 90, jax.random.key(4), record=False)
    s = carry.stats
    total = int(s.finished)
    np.testing.assert_allclose(np.asarray(s.wins) / total, [0.585, 0.288], atol=0.01)
    np.testing.assert_allclose(int(s.draws) / total, 0.127, atol=0.01)
