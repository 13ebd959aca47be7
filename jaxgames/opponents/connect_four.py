"""Perfect Connect Four players: AB and AB-DL (GBG's names), with exact per-move scores.

Scores are exact, in Pascal Pons' convention from the side to move (see `c4solver`): 0 draw,
> 0 a win (larger = sooner), < 0 a loss (more negative = sooner). 7x6 positions with up to 8
stones come from the shipped opening book; everything else is solved by search (any board
size that fits a 64-bit bitboard, e.g. 6x8 "FIAR" from mid-game), with a transposition table
and a score cache that persist for the life of the process.

* **AB** plays uniformly at random among the moves with the best score (the fastest win, or a
  draw) and, in a lost position, any legal move.
* **AB-DL** ("distant losses") plays the best score everywhere, so when every move loses it
  picks one that postpones the loss longest.
* **GBG-DL** is our model of the AB-DL that GBG's results were measured against
  (`AlphaBetaAgent` with `sigfac` 1000, its 8-ply book and its 12-ply book with distances,
  read from GBG's source). It plays AB-DL's moves except in lost positions, where it tells
  losses apart less finely (see `gbg_loss_rank`): up to 8 stones GBG's book knows no
  distances, so every loss after the 8th stone ranks the same (it plays like AB there); from 13
  stones on its search measures a loss exactly only within 14 plies and later ones in buckets
  of 20 stones (`countPieces() / 20`). Left out: GBG's search shortcuts (a double threat seen
  early counts as a win at that depth) and its transposition table's depth-dependent values.
  (Among winning moves GBG's agent is also less particular; that changes no result.)

Both are batched JAX policies (`ab_policy(game)`), running the search on the host through
`jax.pure_callback`; they skip the games of the batch in which they are not to move.
"""

from __future__ import annotations

import functools
import importlib.resources

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Game, State
from jaxgames.opponents.c4solver import make_solver


def board_bits(board: np.ndarray) -> tuple[int, int, int]:
    """(position, mask, stones) bitboards of a board in the game's encoding.

    Args:
        board: int8[rows, cols], row 0 at the bottom, 0 empty, 1/2 the players' stones.

    Returns:
        position: stones of the side to move; mask: all stones; stones: their number.
    """
    board = np.asarray(board)
    rows, cols = board.shape
    stones = int(np.count_nonzero(board))
    mover = 1 + stones % 2
    position = mask = 0
    for c in range(cols):
        for r in range(rows):
            if board[r, c]:
                bit = 1 << (c * (rows + 1) + r)
                mask |= bit
                if board[r, c] == mover:
                    position |= bit
    return position, mask, stones


def board_key(board: np.ndarray) -> int:
    """The unique key (position + mask) of a board, as the solver and the book use it."""
    position, mask, _ = board_bits(board)
    return position + mask


@functools.cache
def _book() -> tuple[np.ndarray, np.ndarray]:
    data = importlib.resources.files("jaxgames.data").joinpath("connect_four_book.npz")
    with data.open("rb") as f, np.load(f) as npz:
        return npz["keys"], npz["scores"]


def book_score(key: int, stones: int) -> int | None:
    """The book's exact score of a 7x6 position (side to move) with at most 8 stones."""
    if stones > 8:
        return None
    keys, scores = _book()
    i = int(np.searchsorted(keys, np.uint64(key)))
    if i < len(keys) and int(keys[i]) == key:
        return int(scores[i])
    return None


def check_board(board, rows: int = 6, cols: int = 7) -> np.ndarray:
    """The board as int8[rows, cols] if it is a position of a game in progress; else ValueError
    naming what is wrong: another shape, cells other than 0, 1, 2, floating stones, stone
    counts no game produces, four in a row already, or a full board."""
    array = np.asarray(board)
    if array.shape != (rows, cols):
        raise ValueError(
            f"expected a {rows}x{cols} board (rows x columns), got shape {array.shape}"
        )
    if not np.isin(array, (0, 1, 2)).all():
        bad = sorted({v.item() for v in np.unique(array)} - {0, 1, 2})
        raise ValueError(f"board cells must be 0 (empty), 1 or 2 (the players' stones), got {bad}")
    array = array.astype(np.int8)
    floating = (array[1:] != 0) & (array[:-1] == 0)
    if floating.any():
        r, c = np.argwhere(floating)[0]
        raise ValueError(f"the stone at row {r + 1}, column {c} floats over an empty cell")
    first, second = int((array == 1).sum()), int((array == 2).sum())
    if first - second not in (0, 1):
        raise ValueError(
            f"{first} stones of the first player and {second} of the second: no game gives "
            "that (the first player has as many stones as the second, or one more)"
        )
    position, mask, _ = board_bits(array)
    for stone in (1, 2):
        mine = position if stone == 1 + (first + second) % 2 else position ^ mask
        if _has_won(mine, rows):
            raise ValueError(f"player {stone - 1} already has four in a row: the game is over")
    if (array != 0).all():
        raise ValueError("the board is full: the game is over, no move is left")
    return array


class PerfectConnectFour:
    """Exact move scores for one board size, cached per position."""

    def __init__(self, rows: int = 6, cols: int = 7):
        self.rows, self.cols = rows, cols
        self.solver = make_solver(cols, rows)
        self.use_book = (rows, cols) == (6, 7)
        if self.use_book:
            self.solver.set_book(*_book(), depth=8)
        self._cache: dict[int, tuple[int | None, ...]] = {}
        self._best: dict[tuple[int, bool], tuple[int, list[int]]] = {}

    def scores_of(self, position: int, mask: int, stones: int) -> tuple[int | None, ...]:
        key = position + mask
        if key not in self._cache:
            book = book_score if self.use_book else None
            self._cache[key] = tuple(self.solver.move_scores(position, mask, stones, book))
        return self._cache[key]

    def move_scores(self, board: np.ndarray) -> tuple[int | None, ...]:
        """Score of each column of a board (None for full columns), from the side to move.

        Raises:
            ValueError: not a position of a game in progress on this board size
                (`check_board`).
        """
        return self.scores_of(*board_bits(check_board(board, self.rows, self.cols)))

    def best_moves(self, board: np.ndarray, exact_losses: bool = True) -> tuple[int, list[int]]:
        """(best score, the columns that reach it) of a board, cached per position.

        With `exact_losses` off, a lost position gives (-1, every legal column) without the
        (costly) search for the slowest loss.

        Raises:
            ValueError: not a position of a game in progress on this board size.
        """
        position, mask, stones = board_bits(check_board(board, self.rows, self.cols))
        key = (position + mask, exact_losses)
        if key not in self._best:
            if key[0] in self._cache:
                scores = self._cache[key[0]]
                best = max(s for s in scores if s is not None)
                self._best[key] = (best, [c for c, s in enumerate(scores) if s == best])
            else:
                book = book_score if self.use_book else None
                self._best[key] = self.solver.best_moves(position, mask, stones, book, exact_losses)
        return self._best[key]

    def choose(self, board: np.ndarray, word: int, style: str) -> int:
        """The move of `style` ("ab", "dl" or "gbg-dl"), `word` (a random integer) choosing
        among ties."""
        best, options = self.best_moves(board, exact_losses=style == "dl")
        if best < 0 and style == "ab":
            options = [c for c in range(self.cols) if board[self.rows - 1, c] == 0]
        elif best < 0 and style == "gbg-dl":
            stones = int(np.count_nonzero(board))
            cells = self.rows * self.cols
            ranks = {
                c: gbg_loss_rank(stones, loss_end(s, stones, cells))
                for c, s in enumerate(self.move_scores(board))
                if s is not None
            }
            top = max(ranks.values())
            options = [c for c, r in ranks.items() if r == top]
        return options[word % len(options)]


STYLES = ("ab", "dl", "gbg-dl")


def loss_end(score: int, stones: int, cells: int = 42) -> int:
    """The number of stones on the board when the game ends, for a move of Pons score
    `score` < 0 played with `stones` on the board: the opponent then wins with that stone
    (under perfect play, the loser delaying it longest, the winner hurrying)."""
    if score >= 0:
        raise ValueError(f"loss_end needs a losing score (< 0), got {score}")
    # A win with the e-th stone scores (cells + 2 - e) // 2 for the winner, so e is one of two
    # neighbours; the winner is the opponent, whose stones have the parity of `stones`.
    end = cells + 2 - 2 * (-score)
    return end if end % 2 == stones % 2 else end - 1


def gbg_loss_rank(stones: int, end: int) -> tuple[int, int]:
    """How GBG's AB-DL ranks a losing move (higher is preferred), in our model of it.

    GBG scores each move by an alpha-beta search from the position after it, and a loss there
    by the depth at which the search finds it (`1020 - depth`) while it still runs its
    depth-limited "start" functions (depth <= 14), later by `1000 - stones / 20` (integer
    division) with the stones on the board when it happens; a search that reaches 8 stones
    stops at the book, which gives every loss the same value, and one that reaches 12 stones at
    the deep book, which has exact distances. A loss found near ranks below every far one.

    Args:
        stones: stones on the board before the move.
        end: stones on the board when the opponent wins (`loss_end`).
    """
    after = stones + 1
    if after <= 8:  # the 8-stone book: no distances
        return (0, end) if end <= 8 else (1, 0)
    if after <= 12:  # the 12-stone book with exact distances
        return (0, end)
    if end - stones <= 14:  # found by the start functions: exact depth
        return (0, end)
    return (1, end // 20)


@functools.cache
def perfect_player(rows: int = 6, cols: int = 7) -> PerfectConnectFour:
    """The (process-wide, cached) perfect player for a board size."""
    return PerfectConnectFour(rows, cols)


def connect_four_scores(moves) -> list[int | None]:
    """Exact score of each column of a 7x6 position, in Pons' convention from the side to move.

    Args:
        moves: the columns played from the empty board, 0-indexed.

    Returns:
        7 scores; None for a full column.

    Raises:
        ValueError: a move that is not a column number, a column out of range or full, moves
            after a win, or a game already over.
    """
    columns = []
    for i, m in enumerate(moves):
        if isinstance(m, bool | np.bool_) or not isinstance(m, int | np.integer):
            raise ValueError(f"move {i}: {m!r} is not a column number (an integer 0 to 6)")
        columns.append(int(m))
    player = perfect_player(6, 7)
    position, mask, stones = player.solver.position(columns)
    if _has_won(position ^ mask, player.solver.height):
        raise ValueError(f"the game is over after moves {columns}: the last move won")
    if stones == 42:
        raise ValueError(f"the board is full after moves {columns}: no move is left")
    return list(player.scores_of(position, mask, stones))


def _has_won(bits: int, height: int) -> bool:
    """Whether a player's stones contain four in a row (bitboard with height + 1 per column)."""
    for shift in (1, height, height + 1, height + 2):
        m = bits & (bits >> shift)
        if m & (m >> (2 * shift)):
            return True
    return False


def ab_policy(game: Game, style: str = "ab"):
    """The batched perfect policy of `style` for a Connect Four game: "ab" (AB), "dl" (AB-DL)
    or "gbg-dl" (our model of GBG's AB-DL).

    Raises:
        ValueError: an unknown style, or `game` is not Connect Four with connect=4 on a board
            the solver supports.
    """
    if style not in STYLES:
        raise ValueError(f"unknown perfect-player style {style!r}; expected one of {STYLES}")
    opts = dict(game.options)
    if game.name != "connect_four" or opts.get("connect") != 4:
        raise ValueError(
            f"the perfect Connect Four player needs connect_four with connect=4, got {game!r}"
        )
    rows, cols = opts["rows"], opts["cols"]
    if cols * (rows + 1) > 64:
        raise ValueError(
            f"the solver supports boards with cols * (rows + 1) <= 64, got {rows}x{cols}"
        )
    return _host_policy(rows, cols, style)


@functools.cache
def _host_policy(rows: int, cols: int, style: str):
    def host(boards, active, words):
        player = perfect_player(rows, cols)
        out = np.zeros(len(boards), np.int32)
        for i in np.flatnonzero(np.asarray(active)):
            out[i] = player.choose(np.asarray(boards[i]), int(words[i]), style)
        return out

    def policy(states: State, key: jax.Array) -> jax.Array:
        active = ~states.terminated & jnp.any(states.legal_action_mask, axis=-1)
        words = jax.random.bits(key, active.shape, jnp.uint32)
        shape = jax.ShapeDtypeStruct(active.shape, jnp.int32)
        return jax.pure_callback(host, shape, states.board, active, words, vmap_method="sequential")

    return policy
