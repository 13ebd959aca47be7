"""An exact Connect Four solver for any board up to 64 bitboard bits (7x6, 8x6 "FIAR", ...).

The algorithm follows Pascal Pons' solver ("Solving Connect 4: how to build a perfect AI"):
bitboards with one sentinel bit per column, negamax with alpha-beta pruning, a transposition
table of upper and lower bounds, bounds from "nobody can win at once", pruning of moves that
hand the opponent a win, move ordering by the number of threats a move creates (centre columns
first on ties), iterative null-window search on the score, and an opening book consulted inside
the search (7x6: every position with up to 8 stones). Compiled with numba, one specialisation
per board size.

Scores follow Pons' convention, from the side to move: 0 draw; positive, the side to move wins,
and the score is (cells + 1 - stones on the board when the winning stone is played) // 2;
negative, it loses, by the same measure. So a larger |score| is a quicker result.

Bit layout (7 rows shown for a 6-row board: row 6 is the sentinel):

    col:  0  1  2  3  4  5  6
    row6  6 13 20 27 34 41 48
    row5  5 12 19 26 33 40 47
    ...
    row0  0  7 14 21 28 35 42
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numba
import numpy as np

TABLE_SIZE = 8_388_593  # a prime: (key mod size, key mod 2^32) identifies keys below 2^55


@functools.cache
def make_solver(width: int = 7, height: int = 6, table_size: int = TABLE_SIZE):
    """Compiles the solver for a `width` x `height` board (connect 4). Cached per size.

    Returns:
        A `Solver` holding the jitted functions and a transposition table that persists across
        calls (later positions reuse what earlier searches learned).
    """
    if width * (height + 1) > 64:
        raise ValueError(f"a {width}x{height} board does not fit a 64-bit bitboard")
    if width < 4 and height < 4:
        raise ValueError(
            f"Connect Four needs a board of at least 4 in one direction, got {width}x{height}"
        )
    u64 = np.uint64
    H1 = u64(height + 1)
    H2 = u64(height + 2)
    Hs = u64(height)
    one = u64(1)
    cells = width * height
    min_score = -(cells // 2) + 3
    max_score = (cells + 1) // 2 - 3
    bottom = u64(0)
    for c in range(width):
        bottom |= one << u64(c * (height + 1))
    board_mask = bottom * ((one << u64(height)) - one)
    order = np.array(
        [width // 2 + (1 - 2 * (i % 2)) * (i + 1) // 2 for i in range(width)], np.int64
    )
    column_masks = np.array(
        [((one << u64(height)) - one) << u64(c * (height + 1)) for c in range(width)], np.uint64
    )
    top_masks = np.array(
        [one << u64(height - 1 + c * (height + 1)) for c in range(width)], np.uint64
    )
    bottom_masks = np.array([one << u64(c * (height + 1)) for c in range(width)], np.uint64)
    size = u64(table_size)

    @numba.njit(cache=False, inline="always")
    def winning_spots(position, mask):
        """Empty cells where the owner of `position` would complete four."""
        r = (position << one) & (position << u64(2)) & (position << u64(3))
        for shift in (H1, Hs, H2):
            p = (position << shift) & (position << (u64(2) * shift))
            r |= p & (position << (u64(3) * shift))
            r |= p & (position >> shift)
            p = (position >> shift) & (position >> (u64(2) * shift))
            r |= p & (position << shift)
            r |= p & (position >> (u64(3) * shift))
        return r & (board_mask ^ mask)

    @numba.njit(cache=False, inline="always")
    def possible(mask):
        return (mask + bottom) & board_mask

    m1, m2, m4 = u64(0x5555555555555555), u64(0x3333333333333333), u64(0x0F0F0F0F0F0F0F0F)
    h01 = u64(0x0101010101010101)

    @numba.njit(cache=False, inline="always")
    def popcount(x):
        x = x - ((x >> one) & m1)
        x = (x & m2) + ((x >> u64(2)) & m2)
        x = (x + (x >> u64(4))) & m4
        return int((x * h01) >> u64(56))

    @numba.njit(cache=False)
    def non_losing_moves(position, mask):
        """Moves that do not let the opponent win at once (0: every move loses)."""
        moves = possible(mask)
        threats = winning_spots(position ^ mask, mask)
        forced = moves & threats
        if forced:
            if forced & (forced - one):
                return u64(0)
            moves = forced
        return moves & ~(threats >> one)

    @numba.njit(cache=False)
    def book_lookup(key, stones, book_keys, book_scores, book_depth):
        """The book score (+ 100 so that 0 means "not found") of a position, or 0."""
        if stones > book_depth or len(book_keys) == 0:
            return 0
        i = np.searchsorted(book_keys, key)
        if i < len(book_keys) and book_keys[i] == key:
            return int(book_scores[i]) + 100
        return 0

    @numba.njit(cache=False)
    def negamax(position, mask, stones, alpha, beta, ctx):
        """Alpha-beta score of a position; ctx = (table keys, table values, node counter,
        move buffer, score buffer, book keys, book scores, book depth)."""
        keys, values, counter, moves_buf, scores_buf, book_keys, book_scores, book_depth = ctx
        counter[0] += 1
        nxt = non_losing_moves(position, mask)
        if nxt == 0:
            return -((cells - stones) // 2)
        if stones >= cells - 2:
            return 0
        low = -((cells - 2 - stones) // 2)
        if alpha < low:
            alpha = low
            if alpha >= beta:
                return alpha
        high = (cells - 1 - stones) // 2
        if beta > high:
            beta = high
            if alpha >= beta:
                return beta
        key = position + mask
        slot = key % size
        if keys[slot] == np.uint32(key & u64(0xFFFFFFFF)) and values[slot] != 0:
            val = int(values[slot])
            if val > max_score - min_score + 1:  # a lower bound
                low = val + 2 * min_score - max_score - 2
                if alpha < low:
                    alpha = low
                    if alpha >= beta:
                        return alpha
            else:  # an upper bound
                high = val + min_score - 1
                if beta > high:
                    beta = high
                    if alpha >= beta:
                        return beta
        found = book_lookup(key, stones, book_keys, book_scores, book_depth)
        if found:
            return found - 100
        # Order: more threats first; among equals, centre columns first.
        moves = moves_buf[stones]
        scores = scores_buf[stones]
        n = 0
        for i in range(width):
            move = nxt & column_masks[order[width - 1 - i]]
            if move:
                score = popcount(winning_spots(position | move, mask))
                j = n
                while j > 0 and scores[j - 1] > score:
                    moves[j] = moves[j - 1]
                    scores[j] = scores[j - 1]
                    j -= 1
                moves[j] = move
                scores[j] = score
                n += 1
        for k in range(n - 1, -1, -1):
            move = moves[k]
            score = -negamax(position ^ mask, mask | move, stones + 1, -beta, -alpha, ctx)
            if score >= beta:
                keys[slot] = np.uint32(key & u64(0xFFFFFFFF))
                values[slot] = np.uint8(score + max_score - 2 * min_score + 2)
                return score
            if score > alpha:
                alpha = score
        keys[slot] = np.uint32(key & u64(0xFFFFFFFF))
        values[slot] = np.uint8(alpha - min_score + 1)
        return alpha

    @numba.njit(cache=False)
    def context(table):
        """The negamax context: the shared table, plus fresh per-depth move buffers.
        table = (keys, values, counter, book keys, book scores, book depth)."""
        keys, values, counter, book_keys, book_scores, book_depth = table
        moves_buf = np.empty((cells + 1, width), np.uint64)
        scores_buf = np.empty((cells + 1, width), np.int64)
        return keys, values, counter, moves_buf, scores_buf, book_keys, book_scores, book_depth

    @numba.njit(cache=False)
    def solve(position, mask, stones, table):
        """Exact score of a position (not over) from the side to move."""
        if winning_spots(position, mask) & possible(mask):
            return (cells + 1 - stones) // 2
        ctx = context(table)
        lo = -((cells - stones) // 2)
        hi = (cells + 1 - stones) // 2
        while lo < hi:
            med = lo + (hi - lo) // 2
            if med <= 0 and lo // 2 < med:
                med = lo // 2
            elif med >= 0 and hi // 2 > med:
                med = hi // 2
            r = negamax(position, mask, stones, med, med + 1, ctx)
            if r <= med:
                hi = r
            else:
                lo = r
        return lo

    @numba.njit(cache=False)
    def bound(position, mask, stones, alpha, table):
        """Null-window search around `alpha`: r <= alpha means score <= r, else score >= r."""
        return negamax(position, mask, stones, alpha, alpha + 1, context(table))

    kernels = Kernels(solve, bound, winning_spots, possible, top_masks, bottom_masks, column_masks)
    return Solver(width, height, kernels, table_size)


class Kernels(NamedTuple):
    """The compiled functions and column masks of one board size."""

    solve: Any
    bound: Any
    winning_spots: Any
    possible: Any
    top_masks: np.ndarray
    bottom_masks: np.ndarray
    column_masks: np.ndarray


class Solver:
    """A compiled solver for one board size, with its persistent transposition table."""

    def __init__(self, width: int, height: int, kernels: Kernels, table_size: int):
        self.width, self.height = width, height
        self._solve, self._bound = kernels.solve, kernels.bound
        self._winning_spots, self._possible = kernels.winning_spots, kernels.possible
        self.top_masks, self.bottom_masks = kernels.top_masks, kernels.bottom_masks
        self.column_masks = kernels.column_masks
        self.keys = np.zeros(table_size, np.uint32)
        self.values = np.zeros(table_size, np.uint8)
        self.nodes = np.zeros(1, np.int64)
        self.book = (np.zeros(0, np.uint64), np.zeros(0, np.int8), 0)

    def set_book(self, keys: np.ndarray, scores: np.ndarray, depth: int) -> None:
        """Exact scores (sorted position keys, scores from the side to move) of every position
        with at most `depth` stones, consulted inside the search."""
        order = np.argsort(keys)
        self.book = (
            np.asarray(keys, np.uint64)[order],
            np.asarray(scores, np.int8)[order],
            int(depth),
        )

    def reset(self) -> None:
        """Clears the transposition table."""
        self.keys[:] = 0
        self.values[:] = 0

    def position(self, moves) -> tuple[int, int, int]:
        """(position, mask, stones) after 0-indexed column `moves`; ValueError on a bad move or
        a move after the game has been won."""
        position, mask = np.uint64(0), np.uint64(0)
        for i, col in enumerate(moves):
            col = int(col)
            if not 0 <= col < self.width:
                raise ValueError(f"move {i}: column {col} is not in [0, {self.width - 1}]")
            if mask & self.top_masks[col]:
                raise ValueError(f"move {i}: column {col} is full")
            move = (mask + self.bottom_masks[col]) & self.column_masks[col]
            if self._winning_spots(position, mask) & move and i != len(moves) - 1:
                raise ValueError(f"move {i} (column {col}) wins; no moves may follow it")
            position ^= mask
            mask |= move
        return int(position), int(mask), len(moves)

    def _table(self) -> tuple:
        return (self.keys, self.values, self.nodes, *self.book)

    def solve(self, position: int, mask: int, stones: int) -> int:
        """Exact score of a position in which nobody has won yet, from the side to move."""
        if stones >= self.width * self.height:
            return 0
        return int(self._solve(np.uint64(position), np.uint64(mask), stones, self._table()))

    def move_scores(self, position: int, mask: int, stones: int, book=None) -> list[int | None]:
        """The score of playing each column (None for a full column), from the side to move.

        A winning move scores (cells + 1 - stones) // 2; any other move scores minus the score
        of the position it leads to (looked up in `book(key, stones)` when that returns a
        value, else solved).
        """
        position, mask = np.uint64(position), np.uint64(mask)  # type: ignore[assignment]
        wins = self._winning_spots(position, mask)
        out: list[int | None] = []
        cells = self.width * self.height
        for col in range(self.width):
            if mask & self.top_masks[col]:
                out.append(None)
                continue
            move = (mask + self.bottom_masks[col]) & self.column_masks[col]
            if wins & move:
                out.append((cells + 1 - stones) // 2)
                continue
            child, child_mask = position ^ mask, mask | move
            score = book(int(child + child_mask), stones + 1) if book is not None else None
            if score is None:
                score = self.solve(int(child), int(child_mask), stones + 1)
            out.append(-int(score))
        return out

    def _children(self, position: int, mask: int):
        """(column, child position, child mask, wins at once) for every legal column,
        centre columns first."""
        position, mask = np.uint64(position), np.uint64(mask)  # type: ignore[assignment]
        wins = self._winning_spots(position, mask)
        order = sorted(range(self.width), key=lambda c: abs(2 * c - (self.width - 1)))
        for col in order:
            if mask & self.top_masks[col]:
                continue
            move = (mask + self.bottom_masks[col]) & self.column_masks[col]
            yield col, int(position ^ mask), int(mask | move), bool(wins & move)

    def outcome(self, position: int, mask: int, stones: int) -> int:
        """The sign of a position's score (1 win, 0 draw, -1 loss for the side to move), from
        two null-window searches: much cheaper than the exact score."""
        if stones >= self.width * self.height:
            return 0
        args = (np.uint64(position), np.uint64(mask), stones)
        if self._winning_spots(args[0], args[1]) & self._possible(args[1]):
            return 1
        if int(self._bound(*args, 0, self._table())) > 0:
            return 1
        return -1 if int(self._bound(*args, -1, self._table())) < 0 else 0

    def best_moves(
        self, position: int, mask: int, stones: int, book=None, exact_losses: bool = True
    ):
        """(best score, the columns that reach it), cheaper than `move_scores`.

        Each column is first classified as a win, draw or loss (`outcome` of the position it
        leads to, or the book); exact scores are then computed only among the winning columns
        (to find the fastest win) or, when every column loses and `exact_losses` is set, among
        the losing ones (to find the slowest loss). With `exact_losses` off, a lost position
        reports (-1, all columns).
        """
        cells = self.width * self.height
        children = list(self._children(position, mask))
        winners = [c for c, _, _, win in children if win]
        if winners:
            return (cells + 1 - stones) // 2, sorted(winners)
        classes = {}
        exact = {}
        for col, child, child_mask, _ in children:
            known = book(child + child_mask, stones + 1) if book is not None else None
            if known is not None:
                exact[col] = -int(known)
                classes[col] = int(np.sign(exact[col]))
            else:
                classes[col] = -self.outcome(child, child_mask, stones + 1)
        best_class = max(classes.values())
        if best_class == 0:
            return 0, sorted(c for c, k in classes.items() if k == 0)
        if best_class < 0 and not exact_losses:
            return -1, sorted(classes)
        scores = {}
        for col, child, child_mask, _ in children:
            if classes[col] != best_class:
                continue
            scores[col] = exact.get(col, -self.solve(child, child_mask, stones + 1))
        best = max(scores.values())
        return best, sorted(c for c, v in scores.items() if v == best)
