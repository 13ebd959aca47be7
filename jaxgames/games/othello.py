"""Othello (Reversi) on 8x8: `othello` (no options).

Rules: the first player (black, X) and the second (white, O) alternately place a disc on an
empty cell such that, in at least one of the eight directions, a run of one or more of the
opponent's discs is closed by one of the mover's own; every such run is flipped to the mover's
colour. A player without such a move must pass (action 64, legal only then); when neither
player can move (a full board, or no legal move for both) the game ends and the player with
more discs wins (+1, the other -1; equal counts draw).

Cells, flat index = row * 8 + col, row 0 at the top; the start position::

         0  1  2  3  4  5  6  7
    0    .  .  .  .  .  .  .  .
    1    .  .  .  .  .  .  .  .
    2    .  .  .  .  .  .  .  .
    3    .  .  .  O  X  .  .  .          action 64 = pass
    4    .  .  .  X  O  .  .  .
    5    .  .  .  .  .  .  .  .
    6    .  .  .  .  .  .  .  .
    7    .  .  .  .  .  .  .  .

`board` is int8[8, 8]: 0 empty, 1 first player, 2 second player. For n-tuples a cell has
P = 4 states: 0 empty, 1 first player, 2 second player, 3 empty and a legal move for the
player to move.

The rules run on row bitboards (per player eight separate uint8 rows, bit c = column c): a
shift by one cell in any of the eight directions is a renaming of the rows and a shift of the
bits, and moves and flips are found by pushing discs across runs of the opponent's (the
dumb7fill of bitboard engines). Batched, every row is a uint8[B] array, so the whole rule is
element-wise over the games: no gathers, scatters or concatenations, and XLA fuses it into a
few loops (see `_materialised` for the one place where that needs help).
"""

from __future__ import annotations

import functools
import typing

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import core
from jaxgames.games import grid
from jaxgames.types import Array

SIZE = 8
CELLS = SIZE * SIZE
PASS = CELLS
DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


BITS = (1 << np.arange(SIZE)).astype(np.uint8)  # bit c of a row = column c
Rows = tuple[Array, ...]  # a bitboard: 8 uint8 rows (any equal shapes), bit c = column c


def _pack(mask: Array) -> Rows:
    """bool[8, 8] -> a bitboard, one byte per row, bit c set where column c is."""
    rows = jnp.sum(jnp.where(mask, BITS, 0).astype(jnp.uint8), axis=-1, dtype=jnp.uint8)
    return tuple(rows[r] for r in range(SIZE))


def _materialised(rows: Rows) -> Rows:
    """The same rows (or flags), computed once into memory for the consumers that read each
    many times (unpacking a row into 8 cells, a game's end flag into 65 mask entries); see
    `core.materialised`."""
    stacked = core.materialised(jnp.stack(rows))
    return tuple(stacked[i] for i in range(len(rows)))


def _unpack(rows: Rows) -> Array:
    """A bitboard -> bool[8, 8]."""
    return jnp.stack([(row[..., None] & BITS) != 0 for row in rows], axis=-2)


def _and(a: Rows, b: Rows) -> Rows:
    return tuple(x & y for x, y in zip(a, b, strict=True))


def _or(a: Rows, b: Rows) -> Rows:
    return tuple(x | y for x, y in zip(a, b, strict=True))


def _shift(rows: Rows, dr: int, dc: int) -> Rows:
    """The bitboard moved one cell in direction (dr, dc); what leaves the board is lost:
    out[r, c] = in[r - dr, c - dc]. The rows are separate arrays, so a move across rows is a
    renaming, and a row is a byte, so columns cannot wrap into the next row."""
    zero = jnp.zeros_like(rows[0])
    if dr == 1:
        rows = (zero, *rows[:-1])
    elif dr == -1:
        rows = (*rows[1:], zero)
    if dc == 1:
        rows = tuple(row << 1 for row in rows)
    elif dc == -1:
        rows = tuple(row >> 1 for row in rows)
    return rows


def _pushed(start: Rows, through: Rows, dr: int, dc: int) -> Rows:
    """The cells reached from `start` by one step in (dr, dc) and then on, all inside `through`
    (a run of at most 6 cells: two cells always bound it)."""
    run = _and(_shift(start, dr, dc), through)
    for _ in range(SIZE - 3):
        run = _or(run, _and(_shift(run, dr, dc), through))
    return run


def _moves(own: Rows, opp: Rows) -> Rows:
    """The cells where the owner of `own` may place a disc: per direction, its discs pushed
    across runs of the opponent's onto an empty cell."""
    empty = tuple(~(x | y) for x, y in zip(own, opp, strict=True))
    legal = tuple(jnp.zeros_like(row) for row in own)
    for dr, dc in DIRECTIONS:
        legal = _or(legal, _and(_shift(_pushed(own, opp, dr, dc), dr, dc), empty))
    return legal


def _any(rows: Rows) -> Array:
    return functools.reduce(jnp.bitwise_or, rows) != 0


def _flips(disc: Rows, own: Rows, opp: Rows) -> Rows:
    """The opponent's discs that a new disc (`disc`, one bit) turns: per direction, the run of
    the opponent's discs from it, when one of the mover's closes the run."""
    turned = tuple(jnp.zeros_like(row) for row in own)
    for dr, dc in DIRECTIONS:
        run = _pushed(disc, opp, dr, dc)
        closed = _any(_and(_shift(run, dr, dc), own))
        turned = _or(turned, tuple(jnp.where(closed, row, jnp.uint8(0)) for row in run))
    return turned


def _bitboards(board: Array, player: Array) -> tuple[Rows, Rows]:
    """(player's discs, the opponent's) of an int8[8, 8] board as bitboards."""
    return (
        _pack(board == (player + 1).astype(jnp.int8)),
        _pack(board == (2 - player).astype(jnp.int8)),
    )


def _scan(flat: Array, player: Array) -> Array:
    """bool[64]: the cells where `player` may place a disc on a flat board (unbatched)."""
    return _unpack(_moves(*_bitboards(flat.reshape(SIZE, SIZE), player))).reshape(CELLS)


def _count(rows: Rows) -> Array:
    return typing.cast(Array, sum(jax.lax.population_count(r).astype(jnp.int32) for r in rows))


def _after_move(state: core.State, mine: Rows, theirs: Rows, mover: Array) -> core.State:
    """The state once `mover` has moved, leaving its discs `mine` and the other's `theirs`
    (bitboards): the other player to move, or to pass, or the game over with rewards by
    disc count."""
    nxt = 1 - mover
    legal_next = _moves(theirs, mine)
    can = (_any(legal_next).astype(jnp.uint8), _any(_moves(mine, theirs)).astype(jnp.uint8))
    # read many times below (8 cells per row, 65 mask entries per flag): computed once
    settled = _materialised((*mine, *theirs, *legal_next, *can))
    mine, theirs, legal_next = (settled[i * SIZE : (i + 1) * SIZE] for i in range(3))
    next_can, same_can = settled[-2] != 0, settled[-1] != 0
    over = ~next_can & ~same_can
    mask = jnp.concatenate([_unpack(legal_next).reshape(CELLS), (~next_can & same_can)[None]])
    diff = _count(mine) - _count(theirs)  # the mover's lead
    result = jnp.sign(jnp.where(jnp.arange(2) == mover, diff, -diff)).astype(jnp.float32)
    mover_disc, other_disc = (mover + 1).astype(jnp.int8), (2 - mover).astype(jnp.int8)
    board = jnp.where(_unpack(mine), mover_disc, jnp.where(_unpack(theirs), other_disc, 0))
    return state.replace(
        board=board.astype(jnp.int8),
        current_player=nxt,
        legal_action_mask=mask & ~over,
        rewards=jnp.where(over, result, 0.0),
        terminated=over,
        step_count=state.step_count + 1,
    )


def state_from_board(board, player: int) -> core.State:
    """The Othello State of a drawn position with `player` to move (unbatched): its legal
    moves, a pass when it has none but the opponent has, and the end (with the disc-count
    result as rewards) when neither can move. For tests and analysis; jittable."""
    board = jnp.asarray(board, jnp.int8).reshape(SIZE, SIZE)
    start = core.new_state(board, jnp.zeros(CELLS + 1, bool), 2)
    mover = jnp.int32(1 - player)  # as if the other player had just moved
    state = _after_move(start, *_bitboards(board, mover), mover)
    return state.replace(step_count=jnp.sum(board != 0).astype(jnp.int32) - 4)


@functools.cache
def make_othello() -> core.Game:
    """Builds 8x8 Othello."""
    cells = np.arange(CELLS, dtype=np.int32)
    start = np.zeros(CELLS, np.int8)
    start[[27, 36]] = 2
    start[[28, 35]] = 1

    def init(key: core.PRNGKey | None = None) -> core.State:
        del key
        legal = _scan(jnp.asarray(start), jnp.int32(0))
        mask = jnp.concatenate([legal, jnp.zeros(1, bool)])
        return core.new_state(jnp.asarray(start).reshape(SIZE, SIZE), mask, 2)

    def apply(state: core.State, action: Array) -> core.State:
        player = state.current_player
        own, opp = _bitboards(state.board, player)
        disc = _pack((cells == action).reshape(SIZE, SIZE))  # no bit for the pass
        turned = _flips(disc, own, opp)
        mine = _or(_or(own, disc), turned)
        theirs = tuple(x & ~y for x, y in zip(opp, turned, strict=True))
        return _after_move(state, mine, theirs, player)

    def encode(state: core.State) -> Array:
        flat = state.board.reshape(CELLS).astype(jnp.int32)
        return jnp.where(state.legal_action_mask[:CELLS], 3, flat)

    def observe(state: core.State, player: Array) -> Array:
        """bool[8, 8, 3]: `player`'s discs, the opponent's, and the legal moves of the player
        to move."""
        planes = grid.stone_planes(state.board, player, 2)
        legal = state.legal_action_mask[:CELLS].reshape(SIZE, SIZE, 1)
        return jnp.concatenate([planes, legal], axis=-1)

    def render(state: core.State) -> str:
        return grid.render_grid(np.asarray(state.board))

    perms, forward = grid.grid_symmetries(SIZE, SIZE, "dihedral")
    board_spec = core.BoardSpec(
        num_cells=CELLS,
        num_cell_states=4,
        encode=encode,
        symmetries=perms,
        action_symmetries=np.concatenate(
            [forward, np.full((len(forward), 1), PASS, np.int32)], axis=1
        ),
        neighbours=grid.grid_neighbours(SIZE, SIZE, diagonal=True),
    )
    return core.deterministic_game(
        name="othello",
        num_players=2,
        num_actions=CELLS + 1,
        board_shape=(SIZE, SIZE),
        init=init,
        apply=apply,
        observe=observe,
        render=render,
        action_names=(*(f"{'abcdefgh'[c % SIZE]}{c // SIZE + 1}" for c in cells), "pass"),
        max_moves=2 * (CELLS - 4),  # every disc, and a pass between two of them
        board_spec=board_spec,
    )
