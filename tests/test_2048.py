"""2048: merges on drawn rows, the afterstate/chance split, the new tile's distribution, the end,
and random games against a plain-Python slide."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import core
from jaxgames.games.game2048 import slide_line
from tests.helpers import random_games

GAME = jaxgames.make("2048")


def exps(tiles):
    return [0 if t == 0 else int(np.log2(t)) for t in tiles]


@pytest.mark.parametrize(
    ("row", "expected", "reward"),
    [
        ([2, 2, 2, 2], [4, 4, 0, 0], 8),
        ([4, 4, 8, 0], [8, 8, 0, 0], 8),
        ([0, 2, 0, 2], [4, 0, 0, 0], 4),
        ([2, 4, 8, 16], [2, 4, 8, 16], 0),
        ([8, 0, 8, 8], [16, 8, 0, 0], 16),
        ([2, 2, 4, 4], [4, 8, 0, 0], 12),
    ],
)
def test_slide_and_merge(row, expected, reward):
    line, r = jax.jit(slide_line)(jnp.asarray(exps(row), jnp.int8))
    assert list(np.asarray(line)) == exps(expected)
    assert float(r) == reward


def reference_slide(board: np.ndarray, action: int) -> tuple[np.ndarray, float]:
    """Plain Python: rotate so the move goes left, slide each row, rotate back."""
    turns = {3: 0, 0: 1, 2: 3, 1: 2}[action]  # left, up, down, right as left-moves
    b = np.rot90(board, turns).copy()
    reward = 0.0
    for r in range(4):
        tiles = [v for v in b[r] if v]
        out = []
        while tiles:
            if len(tiles) > 1 and tiles[0] == tiles[1]:
                out.append(tiles[0] + 1)
                reward += 2.0 ** (tiles[0] + 1)
                tiles = tiles[2:]
            else:
                out.append(tiles.pop(0))
        b[r] = out + [0] * (4 - len(out))
    return np.rot90(b, -turns), reward


def test_random_games_agree_with_a_plain_python_slide():
    actions, states = random_games(GAME, 40, 400, jax.random.key(0))
    actions, boards = np.asarray(actions), np.asarray(states.board)
    rewards, done = np.asarray(states.rewards)[..., 0], np.asarray(states.terminated)
    masks = np.asarray(states.legal_action_mask)
    for g in range(actions.shape[0]):
        for t in range(1, actions.shape[1]):
            if done[g, t - 1]:
                break
            slid, reward = reference_slide(boards[g, t - 1], int(actions[g, t]))
            new = boards[g, t] != slid
            assert new.sum() == 1 and slid[new] == 0 and boards[g, t][new] in (1, 2)
            assert rewards[g, t] == reward
            legal = [
                not np.array_equal(reference_slide(boards[g, t], a)[0], boards[g, t])
                for a in range(4)
            ]
            assert done[g, t] == (not any(legal))
            np.testing.assert_array_equal(masks[g, t], np.array(legal) & ~done[g, t])


def test_new_tiles_are_twos_nine_times_in_ten_in_empty_cells():
    state = GAME.init(jax.random.key(0))
    after = GAME.afterstate(state, jnp.int32(int(np.flatnonzero(state.legal_action_mask)[0])))
    keys = jax.random.split(jax.random.key(1), 20_000)
    spawned = jax.jit(jax.vmap(GAME.chance, in_axes=(None, 0)))(after, keys)
    diff = np.asarray(spawned.board).reshape(-1, 16) - np.asarray(after.board).reshape(16)
    assert np.all((diff != 0).sum(1) == 1)
    tiles = diff[diff != 0]
    assert abs(np.mean(tiles == 1) - 0.9) < 0.01
    cells = np.flatnonzero(np.asarray(after.board).reshape(16) == 0)
    counts = np.bincount(np.argmax(diff != 0, axis=1), minlength=16)[cells]
    assert counts.min() > 0.8 * counts.mean()


def test_a_locked_board_ends_the_game_and_a_no_op_move_is_illegal():
    full = np.array(exps([2, 4, 2, 4, 4, 2, 4, 2, 2, 4, 2, 4, 4, 2, 4, 2]), np.int8)
    state = core.new_state(jnp.asarray(full.reshape(4, 4)), jnp.zeros(4, bool), 1)
    ended = GAME.chance(state, jax.random.key(0))  # no empty cell, no merge
    assert bool(ended.terminated) and not ended.legal_action_mask.any()
    np.testing.assert_array_equal(ended.board, state.board)
    one = np.zeros(16, np.int8)
    one[0] = 1  # a 2 in the top-left corner: up and left change nothing
    state = GAME.chance(
        core.new_state(jnp.asarray(one.reshape(4, 4)), jnp.zeros(4, bool), 1), jax.random.key(1)
    )
    state = state.replace(board=jnp.asarray(one.reshape(4, 4)))
    state = state.replace(legal_action_mask=jnp.asarray([False, True, True, False]))
    with pytest.raises(ValueError, match="action 0 is not legal"):
        core.checked_step(GAME, state, 0, jax.random.key(2))
    moved = core.checked_step(GAME, state, 1, jax.random.key(2))
    assert int(np.asarray(moved.board)[0, 3]) == 1 and float(moved.rewards[0]) == 0.0


@pytest.mark.slow  # 45-60 s to compile 2048's training; docs/results.md has the full run
@pytest.mark.optimized
def test_td_on_afterstates_learns_2048():
    """300 training games lift the mean score far above random play's (measured here too)."""
    from jaxgames.evaluation import arena
    from jaxgames.opponents import random_policy
    from tests.test_learning import run

    random_score = arena(GAME, random_policy, [], 100, jax.random.key(0)).overall.score
    result = run("2048-td", train__games=300, train__batch_size=64, eval__games=50)
    assert result["score"] > 3 * random_score, (result["score"], random_score)


def test_tile_shares_count_the_highest_tile_of_each_board():
    from jaxgames.analysis import tile_shares

    boards = np.zeros((4, 4, 4), np.int8)
    boards[0, 0, 3] = 11  # 2048
    boards[1, 3, 0], boards[1, 0, 0] = 12, 11  # 4096 (and a 2048 beside it)
    boards[2, 2, 2] = 9  # 512
    boards[3, 1, 1] = 10  # 1024
    shares = tile_shares(boards)
    assert shares[512] == 1.0 and shares[1024] == 0.75 and shares[2048] == 0.5
    assert shares[4096] == 0.25 and shares[8192] == 0.0


def test_arena_reports_each_games_score_and_final_board():
    from jaxgames.evaluation import arena
    from jaxgames.games.game2048 import legal_moves
    from jaxgames.opponents import random_policy

    result = arena(GAME, random_policy, [], 30, jax.random.key(4))
    assert result.scores.shape == (30,) and result.final_boards.shape == (30, 4, 4)
    assert np.isclose(result.scores.mean(), result.overall.score, rtol=1e-6)
    q = result.score_quantiles()
    assert q["min"] <= q["median"] <= q["max"] and q["max"] == result.scores.max()
    finished = jax.vmap(legal_moves)(jnp.asarray(result.final_boards.reshape(30, 16)))
    assert not np.asarray(finished).any(), "every game ends with no move left"


@pytest.mark.slow  # 45-65 s: compiles 2048's training and evaluation
def test_eval_command_reports_scores_and_highest_tiles(tmp_path, capsys):
    import dataclasses
    import json

    from jaxgames import cli, presets
    from jaxgames.training import train

    config = presets.load("2048-td")
    config = dataclasses.replace(
        config,
        train=dataclasses.replace(config.train, games=64, batch_size=32, chunk_steps=50),
        eval=dataclasses.replace(config.eval, every=0, games=4),
    )
    train(config, run_dir=tmp_path / "run", progress=False)
    capsys.readouterr()
    args = [str(tmp_path / "run"), "--opponent", "random", "--games", "12"]
    assert cli.cmd_eval([*args, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["games"] == 12 and record["score_min"] <= record["score_median"]
    assert record["score_median"] <= record["score_max"]
    assert set(record["top_tile_share"]) == {
        "512",
        "1024",
        "2048",
        "4096",
        "8192",
        "16384",
        "32768",
    }
    assert cli.cmd_eval(args) == 0
    text = capsys.readouterr().out
    assert "scores: median" in text and "highest tile >= 512:" in text
