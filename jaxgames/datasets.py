"""Evaluation data sets.

`load_uci_connect4()` returns the UCI Connect-4 data set (Dua & Graff; John Tromp's positions),
regenerated from the exact 8-ply opening book rather than downloaded: every legal 7x6 position
with 8 stones in which nobody has won, the first player (to move) has no immediate win and the
second player no immediate threat (so the next move is not forced), one position of each mirror
pair, labelled by perfect play for the first player. Counts: 67,557 = 44,473 wins + 16,635
losses + 6,449 draws. `scripts/make_connect_four_data.py` builds the shipped copy.
"""

from __future__ import annotations

import functools
import importlib.resources

import numpy as np

from jaxgames.games.grid import line_table


def _immediate_wins(board: np.ndarray, stone: int) -> bool:
    """Whether `stone` can complete four by dropping into some column of a 6x7 board."""
    table = line_table(6, 7, 4)
    flat = np.concatenate([board.reshape(-1), [0]])
    heights = (board != 0).sum(axis=0)
    for col in range(7):
        if heights[col] == 6:
            continue
        cell = heights[col] * 7 + col
        trial = flat.copy()
        trial[cell] = stone
        segment = trial[table[cell]] == stone
        if any(segment[d, i : i + 4].all() for d in range(4) for i in range(4)):
            return True
    return False


def build_uci_connect4(book_boards: np.ndarray, book_scores: np.ndarray):
    """The UCI set from the 8-ply book (boards int8[N, 6, 7], scores from the side to move).

    Of each mirror pair the board that is smaller as a byte string is kept; the order is that
    of the mirror-canonical boards sorted the same way.

    Returns:
        (boards int8[67557, 6, 7], outcomes int8[67557]: +1 first player wins, 0 draw, -1 loses).
    """
    eight = np.count_nonzero(book_boards.reshape(len(book_boards), -1), axis=1) == 8
    chosen: dict[bytes, tuple[np.ndarray, int]] = {}
    for board, score in zip(book_boards[eight], book_scores[eight], strict=True):
        if _immediate_wins(board, 1) or _immediate_wins(board, 2):
            continue
        mirror = board[:, ::-1]
        canonical = min(board.tobytes(), mirror.tobytes())
        chosen.setdefault(
            canonical, (np.frombuffer(canonical, np.int8).reshape(6, 7), int(np.sign(score)))
        )
    keys = sorted(chosen)
    boards = np.stack([chosen[k][0] for k in keys]).astype(np.int8)
    outcomes = np.array([chosen[k][1] for k in keys], np.int8)
    return boards, outcomes


@functools.cache
def _uci() -> tuple[np.ndarray, np.ndarray]:
    data = importlib.resources.files("jaxgames.data").joinpath("uci_connect4.npz")
    with data.open("rb") as f, np.load(f) as npz:
        return npz["boards"], npz["outcomes"]


def load_uci_connect4() -> tuple[np.ndarray, np.ndarray]:
    """(boards int8[67557, 6, 7] in the connect_four encoding, outcomes int8[67557]).

    Boards have row 0 at the bottom, 1 = first player's stone, 2 = second player's; the first
    player is to move. Outcomes are +1 (first player wins), 0 (draw), -1 (first player loses)
    under perfect play. Copies are returned, so callers may modify them.
    """
    boards, outcomes = _uci()
    return boards.copy(), outcomes.copy()
