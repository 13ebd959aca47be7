"""Linear approximator: the FIAR notes' Connect Four features on drawn boards and against a plain
Python reference, the raw one-hot features, and the update rule on hand-computed arrays."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.approximators import Hits, linear
from tests.helpers import ascii_board, random_games


def reference_fiar(board: np.ndarray, connect: int) -> np.ndarray:
    """The features by brute force: every window scanned for every question."""
    rows, cols = board.shape
    windows = []
    for r, c, (dr, dc) in itertools.product(
        range(rows), range(cols), ((0, 1), (1, 0), (1, 1), (1, -1))
    ):
        cells = [(r + k * dr, c + k * dc) for k in range(connect)]
        if all(0 <= a < rows and 0 <= b < cols for a, b in cells):
            windows.append(cells)

    def makes(player, cell, need):
        """With a stone of `player` at `cell`: a window through it with `need` of the
        player's stones and none of the opponent's?"""
        stone, other = player + 1, 2 - player
        for w in windows:
            if cell not in w:
                continue
            vals = [stone if x == cell else board[x] for x in w]
            if other not in vals and vals.count(stone) == need:
                return True
        return False

    raw = np.where(board == 1, 1.0, np.where(board == 2, -1.0, 0.0)).reshape(-1)
    pot = np.zeros((2, 3, cols))
    zug = np.zeros(2)
    for p in range(2):
        for c in range(cols):
            h = int(np.sum(board[:, c] != 0))
            if h > 0 and board[h - 1, c] == p + 1:
                pot[p, 0, c] = makes(p, (h - 1, c), connect - 1)
            if h < rows:
                pot[p, 1, c] = makes(p, (h, c), connect - 1)
                pot[p, 2, c] = makes(p, (h, c), connect)
        for r, c in itertools.product(range(rows), range(cols)):
            if board[r, c] == 0 and r % 2 == p and makes(p, (r, c), connect):
                zug[p] = 1
    return np.concatenate([raw, pot.reshape(-1), zug, [1.0]])


def test_fiar_features_on_a_drawn_board():
    board = ascii_board(
        """
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . X . . . . . .
        . X O . . . . .
        O X O . O . . .
        """,
        bottom_first=True,
    )
    phi = np.asarray(linear.fiar_features(6, 8, 4)(jnp.asarray(board)))
    assert phi.shape == (6 * 8 + 6 * 8 + 3,)
    raw = np.where(board == 1, 1, np.where(board == 2, -1, 0))
    np.testing.assert_array_equal(phi[:48].reshape(6, 8), raw)
    pot = phi[48:96].reshape(2, 3, 8)
    # X: its top stone in column 1 sits in an open three; dropping there makes three and four.
    np.testing.assert_array_equal(np.flatnonzero(pot[0].any(0)), [1])
    np.testing.assert_array_equal(pot[0][:, 1], [1, 1, 1])
    # O: a drop into column 2 (vertical), 3 or 5 (row 0, windows 2-5) makes an open three.
    np.testing.assert_array_equal(pot[1, 1], [0, 0, 1, 1, 0, 1, 0, 0])
    assert not pot[1, 0].any() and not pot[1, 2].any()
    # X's threat at row 3 (the 4th row from the bottom) is on an even row: second player's.
    np.testing.assert_array_equal(phi[96:], [0, 0, 1])


def test_zugzwang_parity_features():
    # X threatens (row 0 = first row, odd) at column 3 once it is reachable... any empty cell
    # counts: X X X . on row 2 (third row, odd) is the first player's parity.
    board = ascii_board(
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        X X X . . . .
        O O O X . . .
        X O O O X . .
        """,
        bottom_first=True,
    )
    phi = np.asarray(linear.fiar_features(6, 7, 4)(jnp.asarray(board)))
    np.testing.assert_array_equal(phi[-3:], [1, 0, 1])
    np.testing.assert_array_equal(phi, reference_fiar(board, 4))


@pytest.mark.parametrize(("rows", "cols", "connect"), [(6, 8, 4), (6, 7, 4), (5, 9, 3)])
def test_fiar_features_match_a_brute_force_reference(rows, cols, connect):
    game = jaxgames.make("connect_four", rows=rows, cols=cols, connect=connect)
    _, states = random_games(game, 12, rows * cols, jax.random.key(rows * cols))
    boards = np.asarray(states.board).reshape(-1, rows, cols)[::3]
    phi = jax.jit(jax.vmap(linear.fiar_features(rows, cols, connect)))(jnp.asarray(boards))
    for board, got in zip(boards, np.asarray(phi), strict=True):
        np.testing.assert_array_equal(got, reference_fiar(board, connect))


def test_raw_features_are_one_hot_cells_and_a_bias():
    game = jaxgames.make("tictactoe")
    state = game.step(game.init(jax.random.key(0)), jnp.int32(4), None)
    phi = np.asarray(linear.make_features(game, "raw")(state))
    assert phi.shape == (9 * 3 + 1,)
    cells = phi[:-1].reshape(9, 3)
    np.testing.assert_array_equal(cells.sum(1), np.ones(9))
    assert cells[4, 1] == 1 and cells[0, 0] == 1 and phi[-1] == 1


def test_bad_feature_sets_are_rejected():
    with pytest.raises(ValueError, match=r"'bogus'.*expected one of raw, fiar"):
        linear.make_features(jaxgames.make("tictactoe"), "bogus")
    with pytest.raises(ValueError, match="Connect Four boards, not 'nim'"):
        linear.make_features(jaxgames.make("nim"), "fiar")


@pytest.mark.parametrize(("combine", "scale"), [("sequential", 1.0), ("mean", 0.5)])
def test_update_moves_each_weight_vector_by_its_hits(combine, scale):
    net = linear.LinearNet(num_players=2, num_outputs=3, num_features=2, combine=combine)
    params = linear.init(net)
    hits = Hits(
        player=jnp.array([0, 0, 1, 1], jnp.int32),
        action=jnp.array([2, 2, 0, 1], jnp.int32),
        features=jnp.array([[1.0, 0.0], [1.0, 2.0], [3.0, 3.0], [5.0, 5.0]]),
        signal=jnp.array([0.5, 1.0, -1.0, 7.0]),
        valid=jnp.array([True, True, True, False]),
    )
    w = np.asarray(jax.jit(lambda p, h: linear.update(net, p, h, 0.1))(params, hits)["w"])
    expected = np.zeros((2, 3, 2))
    expected[0, 2] = 0.1 * scale * (0.5 * np.array([1.0, 0.0]) + 1.0 * np.array([1.0, 2.0]))
    expected[1, 0] = 0.1 * -1.0 * np.array([3.0, 3.0])  # one hit: mean = sum
    np.testing.assert_allclose(w, expected, rtol=1e-6)
    v = linear.value(net, {"w": jnp.asarray(w)}, 0, jnp.array([1.0, 1.0]), 2)
    assert np.isclose(float(v), np.tanh(expected[0, 2].sum()))
