"""Nim: `nim` (heaps=3, size=5, max_take=5).

Rules: `heaps` heaps start with `size` items each. Two players alternately remove 1..max_take
items from one heap. Whoever takes the last item wins (+1, the other -1); there are no draws.

Action = heap * max_take + (take - 1)::

    heap 0: actions 0 .. max_take-1            (take 1 .. max_take)
    heap 1: actions max_take .. 2*max_take-1
    ...

Taking more than the heap holds is illegal. `board` is int8[heaps], the heap sizes.
The heap-move machinery here is shared with `nim3p`.

For n-tuples each heap is a cell whose state is its size (P = size + 1); the board symmetries
are the permutations of the heaps (up to 5 heaps; identity only beyond).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable

import jax.numpy as jnp
import numpy as np

from jaxgames import core
from jaxgames.types import Array


def heap_moves(heaps: int, max_take: int) -> tuple[np.ndarray, np.ndarray]:
    """int32[heaps * max_take] heap index and take count of every action."""
    actions = np.arange(heaps * max_take)
    return (actions // max_take).astype(np.int32), (actions % max_take + 1).astype(np.int32)


def make_heap_game(
    name: str,
    num_players: int,
    heaps: int,
    size: int,
    max_take: int,
    final_rewards: Callable[[Array], Array],
    forfeit_rewards: Callable[[Array], Array],
) -> core.Game:
    """A take-from-one-heap game that ends when every heap is empty.

    Args:
        final_rewards: `final_rewards(taker) -> float32[num_players]`, the rewards when `taker`
            empties the last heap.
        forfeit_rewards: `forfeit_rewards(mover) -> float32[num_players]`, the rewards when
            `mover` plays an illegal move and so loses.
    """
    heap_of, take_of = heap_moves(heaps, max_take)

    def mask_of(board: Array) -> Array:
        return board.astype(jnp.int32)[heap_of] >= take_of

    def init(key: core.PRNGKey | None = None) -> core.State:
        del key
        board = jnp.full((heaps,), size, jnp.int8)
        return core.new_state(board, mask_of(board), num_players)

    def apply(state: core.State, action: Array) -> core.State:
        mover = state.current_player
        heap, take = jnp.asarray(heap_of)[action], jnp.asarray(take_of)[action]
        board = state.board - jnp.where(jnp.arange(heaps) == heap, take, 0).astype(jnp.int8)
        terminated = jnp.all(board == 0)
        return state.replace(
            board=board,
            current_player=(mover + 1) % num_players,
            legal_action_mask=mask_of(board),
            rewards=jnp.where(terminated, final_rewards(mover), 0.0).astype(jnp.float32),
            terminated=terminated,
            step_count=state.step_count + 1,
        )

    def observe(state: core.State, player: Array) -> Array:
        """bool[heaps, size + 1]: one-hot heap sizes (the same for every player)."""
        del player
        return state.board[:, None] == jnp.arange(size + 1, dtype=jnp.int8)

    def encode(state: core.State) -> Array:
        return state.board.astype(jnp.int32)

    def changes(state: core.State, encoded: Array) -> tuple[Array, Array]:
        left = jnp.maximum(encoded[heap_of] - take_of, 0)
        return jnp.asarray(heap_of)[:, None], left[:, None]

    def render(state: core.State) -> str:
        board = np.asarray(state.board)
        return "\n".join(
            f"heap {h}: {'|' * int(n):<{size}} ({int(n)})" for h, n in enumerate(board)
        )

    return core.deterministic_game(
        name=name,
        num_players=num_players,
        num_actions=heaps * max_take,
        board_shape=(heaps,),
        init=init,
        apply=apply,
        observe=observe,
        render=render,
        action_names=tuple(
            f"take {t} from heap {h}" for h, t in zip(heap_of, take_of, strict=True)
        ),
        max_moves=heaps * size,
        board_spec=heap_board_spec(heaps, size, max_take, encode, changes),
        forfeit=forfeit_rewards,
    )


def heap_board_spec(heaps, size, max_take, encode, changes) -> core.BoardSpec:
    """Heaps as cells; symmetries permute the heaps (and the actions with them)."""
    orders = list(itertools.permutations(range(heaps))) if heaps <= 5 else [tuple(range(heaps))]
    perms = np.array(orders, np.int32)  # symmetric board s holds heap perms[s, i] at i
    heap_of, take_of = heap_moves(heaps, max_take)
    # A move on heap h of the board is a move on heap h' of board s, where perms[s, h'] = h.
    where = np.argsort(perms, axis=1)
    action_sym = (where[:, heap_of] * max_take + take_of - 1).astype(np.int32)
    others = np.array([[j for j in range(heaps) if j != i] or [-1] for i in range(heaps)], np.int32)
    return core.BoardSpec(
        num_cells=heaps,
        num_cell_states=size + 1,
        encode=encode,
        symmetries=perms,
        action_symmetries=action_sym,
        neighbours=others,
        changes=changes,
    )


@functools.cache
def make_nim(heaps: int = 3, size: int = 5, max_take: int = 5) -> core.Game:
    """Builds two-player Nim: whoever takes the last item wins."""

    return make_heap_game(
        "nim", 2, heaps, size, max_take, core.win_rewards, core.two_player_forfeit
    )
