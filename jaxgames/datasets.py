"""Evaluation data sets.

`load_uci_connect4()` returns the UCI Connect-4 data set (Dua & Graff; John Tromp's positions):
every legal 7x6 position with 8 stones in which nobody has won, the first player (to move) has
no immediate win and the second player no immediate threat (so the next move is not forced),
one position of each mirror pair, labelled by perfect play for the first player. Counts:
67,557 = 44,473 wins + 16,635 losses + 6,449 draws.

The rows are the published file's rows, in its order, regenerated rather than downloaded: the
published file follows from a depth-first search from the empty board that tries the columns in
the order d, c, e, b, f, a, g at every ply, never plays a move that wins, and emits an 8-ply
position the first time it or its mirror image is met (`build_uci_connect4`). The labels come
from the exact 8-ply opening book that ships with the package. `uci_connect4_text` writes the
set in the UCI text format; `scripts/make_connect_four_data.py` builds the shipped copy.
"""

from __future__ import annotations

import functools
import importlib.resources
import pathlib

import numpy as np

ROWS, COLS = 6, 7
UCI_COLUMN_ORDER = (3, 2, 4, 1, 5, 0, 6)  # d, c, e, b, f, a, g
_H1 = ROWS + 1  # bits per column of a bitboard (one spare bit on top)
_BOTTOM = tuple(1 << (c * _H1) for c in range(COLS))
_TOP = tuple(1 << (c * _H1 + ROWS - 1) for c in range(COLS))
_COLUMN = tuple(((1 << ROWS) - 1) << (c * _H1) for c in range(COLS))


def _four(stones: int) -> bool:
    """Whether a bitboard of one player's stones holds four in a row."""
    for shift in (1, _H1, _H1 - 1, _H1 + 1):  # vertical, horizontal, both diagonals
        pairs = stones & (stones >> shift)
        if pairs & (pairs >> (2 * shift)):
            return True
    return False


def _can_win_next(stones: int, mask: int) -> bool:
    """Whether one more stone for `stones` on some playable cell completes four."""
    return any(
        not mask & _TOP[c] and _four(stones | ((mask + _BOTTOM[c]) & _COLUMN[c]))
        for c in range(COLS)
    )


def _mirror(bits: int) -> int:
    column = (1 << _H1) - 1
    return sum(((bits >> (c * _H1)) & column) << ((COLS - 1 - c) * _H1) for c in range(COLS))


def _uci_bitboards() -> list[tuple[int, int]]:
    """(first player's stones, all stones) of the UCI positions, in the published order."""
    visited: set[int] = set()
    emitted: set[int] = set()
    found: list[tuple[int, int]] = []

    def search(mover: int, mask: int, depth: int) -> None:
        # `mover`: stones of the side to move. A position reached again has its whole subtree
        # already searched, so skipping it changes neither the rows nor their order.
        if mover + mask in visited:
            return
        visited.add(mover + mask)
        if depth == 8:
            if _can_win_next(mover, mask) or _can_win_next(mover ^ mask, mask):
                return
            canonical = min(mover + mask, _mirror(mover) + _mirror(mask))
            if canonical not in emitted:
                emitted.add(canonical)
                found.append((mover, mask))
            return
        for c in UCI_COLUMN_ORDER:
            if mask & _TOP[c]:
                continue
            cell = (mask + _BOTTOM[c]) & _COLUMN[c]
            if not _four(mover | cell):  # a move that wins is never played
                search((mask | cell) ^ (mover | cell), mask | cell, depth + 1)

    search(0, 0, 0)
    return found


def build_uci_connect4() -> tuple[np.ndarray, np.ndarray]:
    """The UCI set by the published file's search, labelled from the shipped 8-ply book.

    Returns:
        (boards int8[67557, 6, 7], outcomes int8[67557]: +1 first player wins, 0 draw, -1
        loses), in the published order.
    """
    from jaxgames.opponents.connect_four import _book

    first, mask = (np.array(x, np.uint64) for x in zip(*_uci_bitboards(), strict=True))
    bits = np.uint64(1) << np.array(
        [[c * _H1 + r for c in range(COLS)] for r in range(ROWS)], np.uint64
    )
    stone = lambda x: (x[:, None, None] & bits) != 0
    boards = np.where(stone(mask), np.where(stone(first), 1, 2), 0).astype(np.int8)
    keys, scores = _book()  # the first player is to move: its score is the label
    index = np.searchsorted(keys, first + mask)
    if not np.array_equal(keys[index], first + mask):
        raise ValueError("the 8-ply book lacks some UCI positions; rebuild the package data")
    return boards, np.sign(scores[index]).astype(np.int8)


def uci_connect4_text(boards: np.ndarray, outcomes: np.ndarray) -> str:
    """The set in the UCI text format: per row the 42 cells a1, a2, ..., a6, b1, ..., g6
    (column a..g, row 1 = bottom) as x (first player), o or b (blank), then win / loss / draw
    for the first player; comma-separated, one row per line, `\\n` line ends."""
    symbols = np.array(["b", "x", "o"])
    labels = {1: "win", -1: "loss", 0: "draw"}
    cells = symbols[np.asarray(boards).transpose(0, 2, 1).reshape(len(boards), -1)]
    return "".join(
        ",".join(row) + "," + labels[int(o)] + "\n" for row, o in zip(cells, outcomes, strict=True)
    )


def write_uci_connect4(path: str | pathlib.Path) -> None:
    """Writes the shipped set to `path` in the UCI text format (`uci_connect4_text`)."""
    pathlib.Path(path).write_text(uci_connect4_text(*_uci()), newline="\n")


@functools.cache
def _uci() -> tuple[np.ndarray, np.ndarray]:
    data = importlib.resources.files("jaxgames.data").joinpath("uci_connect4.npz")
    with data.open("rb") as f, np.load(f) as npz:
        return npz["boards"], npz["outcomes"]


def load_uci_connect4() -> tuple[np.ndarray, np.ndarray]:
    """(boards int8[67557, 6, 7] in the connect_four encoding, outcomes int8[67557]), in the
    published file's order.

    Boards have row 0 at the bottom, 1 = first player's stone, 2 = second player's; the first
    player is to move. Outcomes are +1 (first player wins), 0 (draw), -1 (first player loses)
    under perfect play. Copies are returned, so callers may modify them.
    """
    boards, outcomes = _uci()
    return boards.copy(), outcomes.copy()
