"""Rules cross-check: thousands of random games replayed in the plain-Python reference.

Every move's board, legal mask, rewards, termination and player to move must agree. Some moves
are drawn from all actions (out of range included), so forfeits and absorbing terminal states
are checked as well as normal play.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxgames
from jaxgames.registry import resolve_options
from tests import reference
from tests.helpers import GAME_VARIANTS, max_game_length, random_games, variant_id

NUM_GAMES = 2_000
SLOW_REFERENCE = {"othello": 300, "hex": 2000}


def replay_disagreements(name, options, actions, states, limit=5):
    """Replays each game in the reference; returns descriptions of the first disagreements."""
    boards, masks = np.asarray(states.board), np.asarray(states.legal_action_mask)
    rewards, done = np.asarray(states.rewards), np.asarray(states.terminated)
    players = np.asarray(states.current_player)
    problems = []
    for g in range(actions.shape[0]):
        ref = reference.for_game(name, options)
        moves_after_end = 0
        for t in range(actions.shape[1]):
            if ref.over:
                moves_after_end += 1
                if moves_after_end > 2:
                    break
            ref.play(int(actions[g, t]))
            mask = np.zeros(ref.num_actions(), bool)
            mask[ref.legal()] = True
            checks = {
                "board": np.array_equal(boards[g, t], ref.board()),
                "mask": np.array_equal(masks[g, t], mask),
                "rewards": np.allclose(rewards[g, t], ref.rewards),
                "terminated": bool(done[g, t]) == ref.over,
                "player": int(players[g, t]) == ref.player,
            }
            bad = [k for k, ok in checks.items() if not ok]
            if bad:
                problems.append(f"game {g} move {t} actions {actions[g, : t + 1].tolist()}: {bad}")
                break
        if len(problems) >= limit:
            break
    return problems


@pytest.mark.parametrize("variant", GAME_VARIANTS, ids=variant_id)
def test_random_games_agree_with_reference(variant):
    name, options = variant
    game = jaxgames.make(name, **options)
    if game.stochastic:
        pytest.skip("chance moves: tests/test_2048.py replays 2048 against its own reference")
    length = max_game_length(game) + 2  # two more moves check that terminal states absorb
    num_games = NUM_GAMES if not options else NUM_GAMES // 5
    # Othello's plain-Python reference is slow: fewer games (test_othello adds full games)
    num_games = min(num_games, SLOW_REFERENCE.get(name, num_games))
    actions, states = random_games(game, num_games, length, jax.random.key(7), illegal_prob=0.03)
    assert not replay_disagreements(
        name, resolve_options(name, options), np.asarray(actions), states
    )
