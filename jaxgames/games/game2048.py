"""2048 on 4x4: `2048` (no options), a one-player stochastic game.

Rules: the board holds tiles 2, 4, 8, ...; a move (0 up, 1 right, 2 down, 3 left) slides every
tile as far as it goes in that direction, and two equal tiles that meet merge into one of
double value (each tile merges at most once per move; in a row 2 2 2 2 moved left gives
4 4 . .). The move's reward is the sum of the merged tiles' new values. A move that changes
nothing is illegal. After each move a new tile appears in a uniformly random empty cell: a 2
with probability 0.9, a 4 with probability 0.1. The game starts with two such tiles and ends
when no move changes the board; the score is the sum of all rewards.

The move is split as the SPEC asks: `afterstate(state, action)` is the deterministic slide and
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

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import core
from jaxgames.games import grid

Array = jax.Array
SIZE = 4
CELLS = SIZE * SIZE
# row-major cell order read along each direction, so that every move is "slide to the left"
_LINES = np.arange(CELLS).reshape(SIZE, SIZE)
_READ = np.stack(
    [
        _LINES.T,  # up: each column from the top
        _LINES[:, ::-1],  # right: each row from the right
        _LINES.T[:, ::-1],  # down: each column from the bottom
        _LINES,  # left: each row from the left
    ]
).reshape(4, CELLS)
NUM_CELL_STATES = 15  # exponents 0 (empty) .. 14 (16384) for n-tuples; larger tiles share 14


def _compress(line: Array) -> Array:
    """The non-zero entries first, in order (unbatched line of 4)."""
    order = jnp.argsort(line == 0, stable=True)
    return line[order]


def slide_line(line: Array) -> tuple[Array, Array]:
    """A line of 4 exponents slid toward index 0 with merges; returns (line, reward)."""
    line = _compress(line)
    reward = jnp.float32(0.0)
    for i in range(SIZE - 1):
        merge = (line[i] != 0) & (line[i] == line[i + 1])
        reward = reward + jnp.where(merge, 2.0 ** (line[i] + 1).astype(jnp.float32), 0.0)
        line = line.at[i].add(merge.astype(line.dtype))
        line = line.at[i + 1].set(jnp.where(merge, 0, line[i + 1]))
    return _compress(line), reward


def slide(flat: Array, action: Array) -> tuple[Array, Array]:
    """The board (int8[16]) after moving in direction `action`, and the move's reward."""
    read = jnp.asarray(_READ)[action]
    lines, rewards = jax.vmap(slide_line)(flat[read].reshape(SIZE, SIZE))
    out = jnp.zeros_like(flat).at[read].set(lines.reshape(CELLS))
    return out, jnp.sum(rewards)


def legal_moves(flat: Array) -> Array:
    """bool[4]: the directions that change the board."""
    moved = jax.vmap(lambda a: slide(flat, a)[0])(jnp.arange(4))
    return jnp.any(moved != flat[None, :], axis=-1)


def _spawn(flat: Array, key: jax.Array) -> Array:
    """One new tile (2 with p 0.9, else 4) in a uniformly random empty cell (if any)."""
    cell_key, tile_key = jax.random.split(key)
    cell = core.sample_legal(cell_key, flat == 0)
    tile = jnp.where(jax.random.uniform(tile_key) < 0.9, 1, 2).astype(flat.dtype)
    return jnp.where((jnp.arange(CELLS) == cell) & (flat == 0), tile, flat)


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
        flat, reward = slide(state.board.reshape(CELLS), jnp.clip(action, 0, 3))
        return state.replace(
            board=flat.reshape(SIZE, SIZE),
            rewards=reward[None],
            step_count=state.step_count + 1,
        )

    afterstate = core.make_step(apply, lambda mover: jnp.zeros(1, jnp.float32))

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
    )
