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

Moves are found without loops over the board: for every cell and direction the discs along
the ray are gathered at once ([64, 8, 7]); a direction flips when it starts with k >= 1 of the
opponent's discs followed by one of the mover's.
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


def _rays() -> np.ndarray:
    """int32[64, 8, 7]: the cells along each direction from each cell (CELLS = off board)."""
    out = np.full((CELLS, len(DIRECTIONS), SIZE - 1), CELLS, np.int32)
    for r in range(SIZE):
        for c in range(SIZE):
            for d, (dr, dc) in enumerate(DIRECTIONS):
                for k in range(1, SIZE):
                    rr, cc = r + k * dr, c + k * dc
                    if not (0 <= rr < SIZE and 0 <= cc < SIZE):
                        break
                    out[r * SIZE + c, d, k - 1] = rr * SIZE + cc
    return out


RAYS = _rays()


def _runs(flat: Array, player: Array, rays: Array) -> tuple[Array, Array]:
    """For each ray of `rays` (int32[..., 8, 7] cell indices): does a disc of `player` at its
    origin flip along it, and how many opponent discs lead the ray (unbatched).

    Returns:
        (flips bool[..., 8], run int32[..., 8]).
    """
    own = (player + 1).astype(jnp.int8)
    opp = (2 - player).astype(jnp.int8)
    padded = jnp.concatenate([flat, jnp.zeros(1, jnp.int8)])
    along = padded[rays]  # [..., 8, 7]
    run = jnp.sum(jnp.cumprod(along == opp, axis=-1), axis=-1)  # leading opponent discs
    closer = jnp.take_along_axis(along, jnp.minimum(run, SIZE - 2)[..., None], axis=-1)[..., 0]
    flips = (run >= 1) & (run < SIZE - 1) & (closer == own)
    return flips, run


def _scan(flat: Array, player: Array) -> Array:
    """bool[64]: the cells where `player` may place a disc on a flat board (unbatched)."""
    flips, _ = _runs(flat, player, jnp.asarray(RAYS))
    return (flat == 0) & flips.any(-1)


def _after_move(state: core.State, flat: Array, mover: Array) -> core.State:
    """The state once `mover` has moved to `flat`: the other player to move, or to pass, or the
    game over with rewards by disc count."""
    nxt = 1 - mover
    legal_next = _scan(flat, nxt)
    next_can, same_can = legal_next.any(), _scan(flat, mover).any()
    over = ~next_can & ~same_can
    mask = jnp.concatenate([legal_next, (~next_can & same_can)[None]])
    counts = jnp.stack([jnp.sum(flat == 1), jnp.sum(flat == 2)])
    result = jnp.sign(counts - counts[::-1]).astype(jnp.float32)
    return state.replace(
        board=flat.reshape(SIZE, SIZE),
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
    flat = jnp.asarray(board, jnp.int8).reshape(CELLS)
    start = core.new_state(flat.reshape(SIZE, SIZE), jnp.zeros(CELLS + 1, bool), 2)
    state = _after_move(start, flat, jnp.int32(1 - player))
    return state.replace(step_count=jnp.sum(flat != 0).astype(jnp.int32) - 4)


@functools.cache
def make_othello() -> core.Game:
    """Builds 8x8 Othello."""
    cells = np.arange(CELLS, dtype=np.int32)
    start = np.zeros(CELLS, np.int8)
    start[[27, 36]] = 2
    start[[28, 35]] = 1
    steps = np.arange(SIZE - 1)

    def init(key: core.PRNGKey | None = None) -> core.State:
        del key
        legal = _scan(jnp.asarray(start), jnp.int32(0))
        mask = jnp.concatenate([legal, jnp.zeros(1, bool)])
        return core.new_state(jnp.asarray(start).reshape(SIZE, SIZE), mask, 2)

    def apply(state: core.State, action: Array) -> core.State:
        player = state.current_player
        flat = state.board.reshape(CELLS)
        cell = jnp.clip(action, 0, CELLS - 1)
        rays = jnp.asarray(RAYS)[cell]  # only the new disc's rays: [8, 7]
        flips, run = _runs(flat, player, rays)
        # cells to turn: the run of each flipping direction from the new disc, and the disc
        take = flips[:, None] & (steps[None, :] < run[:, None])  # [8, 7]
        targets = jnp.where(take, rays, CELLS).reshape(-1)
        padded = jnp.concatenate([flat, jnp.zeros(1, jnp.int8)])
        placed = padded.at[targets].set((player + 1).astype(jnp.int8))[:CELLS]
        placed = jnp.where(cells == cell, (player + 1).astype(jnp.int8), placed)
        flat = jnp.where(action == PASS, flat, placed)
        return _after_move(state, flat, player)

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
