"""Three-player Nim: `nim3p` (heaps=3, size=5).

Rules (GBG's Nim3P): `heaps` heaps of `size` items; players 0, 1, 2 move in turn, each removing
any number of items (1..size) from one heap. When the last item is taken the game ends with
rewards: the taker gets 0, the player after the taker (the winner) 1, and the player after the
winner 0.2. There are no draws; the reward sum is 1.2. An illegal move is scored as taking the
last item (the mover gets 0).

Action = heap * size + (take - 1), as in `nim` with max_take = size. `board` is int8[heaps].
"""

from __future__ import annotations

import functools

import jax.numpy as jnp

from jaxgames import core
from jaxgames.games.nim import make_heap_game
from jaxgames.types import Array

TAKER_REWARD, WINNER_REWARD, THIRD_REWARD = 0.0, 1.0, 0.2


def final_rewards(taker: Array) -> Array:
    """float32[3]: the rewards when `taker` takes the last item."""
    seat = (jnp.arange(3) - taker) % 3  # 0 taker, 1 the next player, 2 the one after
    return jnp.asarray([TAKER_REWARD, WINNER_REWARD, THIRD_REWARD], jnp.float32)[seat]


@functools.cache
def make_nim3p(heaps: int = 3, size: int = 5) -> core.Game:
    """Builds three-player Nim."""
    return make_heap_game("nim3p", 3, heaps, size, size, final_rewards, final_rewards)
