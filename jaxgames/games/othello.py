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

The rules run on row bitboards (uint8[8] per player, one byte per row): a shift by one cell in
any of the eight directions is a shift of the rows and of the bits, and moves and flips are
found by pushing discs across runs of the opponent's, eight directions at once, no gathers or
scatters (the dumb7fill of bitboard engines).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import core
from jaxgames.games import grid

Array = jax.Array
SIZE = 8
CELLS = SIZE * SIZE
PASS = CELLS
DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


BITS = (1 << np.arange(SIZE)).astype(np.uint8)  # bit c of a row = column c


def _pack(mask: Array) -> Array:
    """bool[8, 8] -> uint8[8]: one byte per row, bit c set where column c is."""
    return jnp.sum(jnp.where(mask, BITS, 0).astype(jnp.uint8), axis=-1, dtype=jnp.uint8)


def _unpack(rows: Array) -> Array:
    """uint8[8] -> bool[8, 8]."""
    return (rows[:, None] & BITS) != 0


def _shift(rows: Array, dr: int, dc: int) -> Array:
    """The row bitboard moved one cell in direction (dr, dc); what leaves the board is lost:
    out[r, c] = in[r - dr, c - dc]. A row is a byte, so columns cannot wrap into the next row."""
    zero = jnp.zeros((*rows.shape[:-1], 1), jnp.uint8)
    if dr == 1:
        rows = jnp.concatenate([zero, rows[..., :-1]], axis=-1)
    elif dr == -1:
        rows = jnp.concatenate([rows[..., 1:], zero], axis=-1)
    if dc == 1:
        rows = rows << 1
    elif dc == -1:
        rows = rows >> 1
    return rows


def _pushed(start: Array, through: Array, dr: int, dc: int) -> Array:
    """The cells reached from `start` by one step in (dr, dc) and then on, all inside `through`
    (a run of at most 6 cells: two cells always bound it)."""
    run = _shift(start, dr, dc) & through
    for _ in range(SIZE - 3):
        run = run | (_shift(run, dr, dc) & through)
    return run


def _moves(own: Array, opp: Array) -> Array:
    """uint8[..., 8]: the cells where the owner of `own` may place a disc (row bitboards, any
    leading shape): per direction, its discs pushed across runs of the opponent's onto an
    empty cell."""
    empty = ~(own | opp)
    legal = jnp.zeros_like(own)
    for dr, dc in DIRECTIONS:
        legal = legal | (_shift(_pushed(own, opp, dr, dc), dr, dc) & empty)
    return legal


def _flips(disc: Array, own: Array, opp: Array) -> Array:
    """uint8[8]: the opponent's discs that a new disc (`disc`, one bit) turns: per direction,
    the run of the opponent's discs from it, when one of the mover's closes the run (the eight
    directions stacked, so that one reduction decides them all)."""
    runs = [_pushed(disc, opp, dr, dc) for dr, dc in DIRECTIONS]
    ends = jnp.stack([_shift(run, dr, dc) for run, (dr, dc) in zip(runs, DIRECTIONS, strict=True)])
    closed = jnp.any((ends & own) != 0, axis=-1, keepdims=True)  # [8, 1]
    turned = jnp.where(closed, jnp.stack(runs), jnp.uint8(0))
    return jax.lax.reduce(turned, jnp.uint8(0), jax.lax.bitwise_or, (0,))


def _bitboards(board: Array, player: Array) -> tuple[Array, Array]:
    """(player's discs, the opponent's) of an int8[8, 8] board as row bitboards."""
    return (
        _pack(board == (player + 1).astype(jnp.int8)),
        _pack(board == (2 - player).astype(jnp.int8)),
    )


def _scan(flat: Array, player: Array) -> Array:
    """bool[64]: the cells where `player` may place a disc on a flat board (unbatched)."""
    return _unpack(_moves(*_bitboards(flat.reshape(SIZE, SIZE), player))).reshape(CELLS)


def _count(rows: Array) -> Array:
    return jnp.sum(jax.lax.population_count(rows).astype(jnp.int32))


def _after_move(state: core.State, mine: Array, theirs: Array, mover: Array) -> core.State:
    """The state once `mover` has moved, leaving its discs `mine` and the other's `theirs`
    (row bitboards): the other player to move, or to pass, or the game over with rewards by
    disc count."""
    nxt = 1 - mover
    both = _moves(jnp.stack([theirs, mine]), jnp.stack([mine, theirs]))  # one pass for both
    legal_next = both[0]
    next_can, same_can = jnp.any(legal_next != 0), jnp.any(both[1] != 0)
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
        return _after_move(state, own | disc | turned, opp & ~turned, player)

    afterstate = core.make_step(apply, core.two_player_forfeit)

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
    return core.Game(
        name="othello",
        num_players=2,
        num_actions=CELLS + 1,
        board_shape=(SIZE, SIZE),
        options=(),
        init=init,
        step=core.deterministic_step(afterstate),
        observe=observe,
        afterstate=afterstate,
        chance=core.no_chance,
        render=render,
        action_names=(*(f"{'abcdefgh'[c % SIZE]}{c // SIZE + 1}" for c in cells), "pass"),
        board_spec=board_spec,
    )
