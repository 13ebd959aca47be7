"""Learning targets, the eligibility horizon and schedules on hand-computed values."""

from __future__ import annotations

import chex
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames.learning import targets
from jaxgames.learning.schedules import Schedule


class TargetsTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_td_target(self):
        td_target = self.variant(targets.td_target)
        r_t = jnp.array([0.0, 1.0, 0.0])
        discount_t = jnp.array([1.0, 0.0, 0.9])  # the middle transition ends the game
        v_t = jnp.array([0.7, 0.3, 0.4])
        np.testing.assert_allclose(td_target(r_t, discount_t, v_t), [0.7, 1.0, 0.36], rtol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_minimax_q_target_maxes_for_the_first_player_and_mins_for_the_second(self):
        target = self.variant(targets.minimax_q_target)
        q_t = jnp.array([0.1, 0.9, -0.3])
        legal = jnp.array([True, False, True])
        first = target(jnp.float32(0.0), jnp.float32(0.5), q_t, legal, jnp.bool_(True))
        second = target(jnp.float32(1.0), jnp.float32(0.5), q_t, legal, jnp.bool_(False))
        none = target(jnp.float32(-1.0), jnp.float32(1.0), q_t, ~jnp.ones(3, bool), jnp.bool_(True))
        np.testing.assert_allclose([first, second, none], [0.05, 0.85, -1.0], rtol=1e-6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_q_learning_target_maxes_over_legal_actions_only(self):
        q_target = self.variant(targets.q_learning_target)
        q_t = jnp.array([[0.1, 0.9, -0.3], [0.5, 0.2, 0.4], [1.0, 2.0, 3.0]])
        legal = jnp.array([[True, False, True], [True, True, True], [False, False, False]])
        out = q_target(jnp.zeros(3), jnp.array([1.0, 0.5, 1.0]), q_t, legal)
        np.testing.assert_allclose(out, [0.1, 0.25, 0.0], rtol=1e-6)


@pytest.mark.parametrize(
    ("lam", "cut", "h"),
    [(0.0, 0.1, 1), (0.5, 0.1, 4), (0.5, 0.01, 7), (0.8, 0.1, 11), (0.9, 0.1, 22)],
)
def test_horizon(lam, cut, h):
    assert targets.horizon(lam, cut) == h
    assert lam ** (h - 1) >= cut - 1e-12 and (lam == 0 or lam**h < cut)


@pytest.mark.parametrize(("lam", "cut"), [(1.0, 0.1), (-0.1, 0.1), (0.5, 0.0)])
def test_horizon_rejects_bad_values(lam, cut):
    with pytest.raises(ValueError):
        targets.horizon(lam, cut)


@pytest.mark.parametrize(
    ("schedule", "values"),
    [
        (Schedule("constant", 0.3), [0.3, 0.3, 0.3]),
        (Schedule("linear", 0.1, 0.0, 100), [0.1, 0.05, 0.0]),
        (Schedule("exponential", 1.0, 0.5, 100), [1.0, 2**-0.5, 0.5]),
        (Schedule("anneal", 0.9, 0.0, 0, 0.99), [0.9, 0.9 * 0.99**50, 0.9 * 0.99**100]),
        (Schedule("inverse", 1.0, 0.0, 50), [1.0, 0.5, 1 / 3]),
    ],
)
def test_schedules(schedule, values):
    got = [float(schedule(g)) for g in (0, 50, 100)]
    np.testing.assert_allclose(got, values, rtol=1e-5)
    assert float(schedule(10_000)) == pytest.approx(float(schedule(10_000)))


def test_an_offset_restarts_a_schedule_where_a_resumed_run_begins():
    first = Schedule("anneal", 0.9, 0.0, 0, 0.99999)
    reached = float(first(1_000_000))
    assert reached == pytest.approx(0.9 * 0.99999**1_000_000, rel=1e-3)
    second = Schedule("anneal", reached, 0.0, 0, 0.9999, offset=1_000_000)
    assert float(second(1_000_000)) == pytest.approx(reached, rel=1e-6)
    assert float(second(1_010_000)) == pytest.approx(reached * 0.9999**10_000, rel=1e-3)
    assert Schedule("linear", 0.2, 0.0, offset=100).resolve(300).games == 200


def test_schedule_resolve_and_validation():
    assert Schedule("linear", 0.1, 0.0).resolve(5000).games == 5000
    assert Schedule("linear", 0.1, 0.0, 10).resolve(5000).games == 10
    with pytest.raises(ValueError, match="kind 'cosine'"):
        Schedule("cosine", 0.1)
    with pytest.raises(ValueError, match="start > 0 and end > 0"):
        Schedule("exponential", 1.0, 0.0)
    with pytest.raises(ValueError, match="anneal factor"):
        Schedule("anneal", 0.9, 0.0, 0, 1.5)
