"""2048 on 4x4: `2048` (no options), a one-player stochastic game.

Rules: the board holds tiles 2, 4, 8, ...; a move (0 up, 1 right, 2 down, 3 left) slides every
tile as far as it goes in that direction, and two equal tiles that meet merge into one of
double value (each tile merges at most once per move; in a row 2 2 2 2 moved left gives
4 4 . .). The move's reward is the sum of the merged tiles' new values. A move that changes
nothing is illegal. After each move a new tile appears in a uniformly random empty cell: a 2
with probability 0.9, a 4 with probability 0.1. The game starts with two such tiles and ends
when no move changes the board; the score is the sum of all rewards.

The move is split in two: `afterstate(state, action)` is the deterministic slide and
merge (it carries the move's reward), `chance(afterstate, key)` adds the random tile and finds
the legal moves (and the end); `step = chance(afterstate(...))`.

Cells, flat index = row * 4 + col, row 0 at the top::

     0  1  2  3
     4  5  6  7
     8  9 10 11
    12 13 14 15

`board` is int8[4, 4] holding tile exponents: 0 empty, k for the tile 2^k. An illegal action
ends the game with reward 0.
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

SIZE = 4
CELLS = SIZE * SIZE
# Every move adds a 2 or a 4 to the tile sum, which 16 cells cap below 2^18 (the largest
# tiles being 2^17, 2^16, ...): fewer than 2^17 moves in any game.
MAX_MOVES = 2**17
NUM_CELL_STATES = 15  # exponents 0 (empty) .. 14 (16384) for n-tuples; larger tiles share 14


def _compress(cols: list[Array]) -> list[Array]:
    """The non-zero entries of a line first, in order; the line is given as its 4 columns
    (arrays of any common shape), so that every line of every direction is done at once with
    elementwise selects (no sort, no gather)."""
    nonzero = [c != 0 for c in cols]
    rank, seen = [], jnp.zeros_like(cols[0])
    for nz in nonzero:  # rank[j]: how many non-zero entries precede entry j
        rank.append(seen)
        seen = seen + nz.astype(seen.dtype)
    return [
        typing.cast(
            Array,
            sum(
                jnp.where(nz & (r == k), c, 0).astype(c.dtype)
                for c, nz, r in zip(cols, nonzero, rank, strict=True)
            ),
        )
        for k in range(SIZE)
    ]


def _slide_lines(lines: Array) -> tuple[Array, Array]:
    """Lines (int8[..., 4] exponents) slid toward index 0 with merges; (lines, rewards[...])."""
    cols = _compress([lines[..., i] for i in range(SIZE)])
    reward = jnp.zeros(lines.shape[:-1], jnp.float32)
    for i in range(SIZE - 1):  # on a compressed line, merges go pairwise from the front
        merge = (cols[i] != 0) & (cols[i] == cols[i + 1])
        gained = jnp.left_shift(jnp.int32(1), cols[i].astype(jnp.int32) + 1).astype(jnp.float32)
        reward = reward + jnp.where(merge, gained, 0.0)
        cols[i] = cols[i] + merge.astype(cols[i].dtype)
        cols[i + 1] = jnp.where(merge, jnp.zeros_like(cols[i + 1]), cols[i + 1])
    return jnp.stack(_compress(cols), axis=-1), reward


def slide_line(line: Array) -> tuple[Array, Array]:
    """A line of 4 exponents slid toward index 0 with merges; returns (line, reward)."""
    return _slide_lines(line)


def _views(board: Array) -> Array:
    """int8[4, 4, 4]: the board read along each direction (up, right, down, left), so that
    every move is "slide each row to the left"."""
    return jnp.stack([board.T, board[:, ::-1], board.T[:, ::-1], board])


def _unviews(moved: Array) -> Array:
    """The inverse of `_views`: int8[4 directions, 4, 4] back to board orientation."""
    up, right, down, left = moved[0], moved[1], moved[2], moved[3]
    return jnp.stack([up.T, right[:, ::-1], down[:, ::-1].T, left])


def slide(flat: Array, action: Array) -> tuple[Array, Array]:
    """The board (int8[16]) after moving in direction `action`, and the move's reward (only
    that direction is slid: the views are picked before and after, by selects)."""
    pick = jnp.arange(SIZE) == action
    view = jnp.sum(jnp.where(pick[:, None, None], _views(flat.reshape(SIZE, SIZE)), 0), axis=0)
    lines, rewards = _slide_lines(view.astype(flat.dtype))
    back = _unviews(jnp.broadcast_to(lines, (SIZE, SIZE, SIZE)))
    board = jnp.sum(jnp.where(pick[:, None, None], back, 0), axis=0).astype(flat.dtype)
    return board.reshape(CELLS), jnp.sum(rewards)


def legal_moves(flat: Array) -> Array:
    """bool[4]: the directions that change the board: some line has an empty cell before a
    tile, or two equal tiles side by side, along the direction (no slide needed)."""
    views = _views(flat.reshape(SIZE, SIZE))
    front, back = views[..., :-1], views[..., 1:]
    moves = ((front == 0) & (back != 0)) | ((front != 0) & (front == back))
    return jnp.any(moves, axis=(-2, -1))


def _spawn(flat: Array, key: jax.Array) -> Array:
    """One new tile (2 with p 0.9, else 4) in a uniformly random empty cell (if any): one
    draw of two 32-bit words, the first picks the cell, the second the tile."""
    words = jax.random.bits(key, (2,), jnp.uint32)
    empty = flat == 0
    cell = core.nth_true(empty, words[0])  # (modulo bias below 1e-8)
    tile = jnp.where(words[1] < jnp.uint32(int(0.9 * 2**32)), 1, 2).astype(flat.dtype)
    return jnp.where(empty & (jnp.arange(CELLS) == cell), tile, flat)


def _action_symmetries(forward: np.ndarray) -> np.ndarray:
    """int32[S, 4]: direction a on the board is direction [s, a] on symmetric board s."""
    vectors = [(-1, 0), (0, 1), (1, 0), (0, -1)]
    out = np.zeros((len(forward), 4), np.int32)
    for s, f in enumerate(forward):
        for a, (dr, dc) in enumerate(vectors):
            p, q = f[1 * SIZE + 1], f[(1 + dr) * SIZE + 1 + dc]
            moved = (q // SIZE - p // SIZE, q % SIZE - p % SIZE)
            out[s, a] = vectors.index(moved)
    return out


@functools.cache
def make_2048() -> core.Game:
    """Builds 2048."""

    def chance(state: core.State, key: jax.Array) -> core.State:
        flat = state.board.reshape(CELLS)
        spawned = _spawn(flat, key)
        legal = legal_moves(spawned)
        live = ~state.terminated
        return state.replace(
            board=jnp.where(live, spawned, flat).reshape(SIZE, SIZE),
            legal_action_mask=legal & live,
            terminated=state.terminated | ~legal.any(),
        )

    def init(key: core.PRNGKey) -> core.State:
        first, second = jax.random.split(key)
        flat = _spawn(_spawn(jnp.zeros(CELLS, jnp.int8), first), second)
        state = core.new_state(flat.reshape(SIZE, SIZE), legal_moves(flat), 1)
        return state

    def apply(state: core.State, action: Array) -> core.State:
        flat, reward = slide(state.board.reshape(CELLS), action)
        return state.replace(
            board=flat.reshape(SIZE, SIZE),
            rewards=reward[None],
            step_count=state.step_count + 1,
        )

    afterstate = core.with_shared_semantics(apply, lambda mover: jnp.zeros(1, jnp.float32))

    def step(state: core.State, action: Array, key: core.PRNGKey) -> core.State:
        return chance(afterstate(state, action), key)

    def encode(state: core.State) -> Array:
        return jnp.minimum(state.board.reshape(CELLS), NUM_CELL_STATES - 1).astype(jnp.int32)

    def observe(state: core.State, player: Array) -> Array:
        """bool[4, 4, 16]: one plane per tile exponent 0..15 (0 = empty)."""
        del player
        return state.board[..., None] == jnp.arange(16, dtype=jnp.int8)

    def render(state: core.State) -> str:
        board = np.asarray(state.board).astype(np.int64)
        tiles = np.where(board > 0, 2**board, 0)
        return "\n".join(" ".join(f"{t:>5}" if t else "    ." for t in row) for row in tiles)

    perms, forward = grid.grid_symmetries(SIZE, SIZE, "dihedral")
    board_spec = core.BoardSpec(
        num_cells=CELLS,
        num_cell_states=NUM_CELL_STATES,
        encode=encode,
        symmetries=perms,
        action_symmetries=_action_symmetries(forward),
        neighbours=grid.grid_neighbours(SIZE, SIZE, diagonal=False),
    )
    return core.Game(
        name="2048",
        num_players=1,
        num_actions=4,
        board_shape=(SIZE, SIZE),
        options=(),
        init=init,
        step=step,
        observe=observe,
        afterstate=afterstate,
        chance=chance,
        render=render,
        action_names=("up", "right", "down", "left"),
        stochastic=True,
        board_spec=board_spec,
        max_moves=MAX_MOVES,
    )
