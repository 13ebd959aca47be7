"""Shared fixtures and helpers: the game variants every suite runs over, random-game drivers."""

from __future__ import annotations

import functools
import importlib.util
import os
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames import core

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def script_module(path: str):
    """The script at REPO/PATH (benchmarks/ and scripts/ are not packages) as a module, named
    by its file's stem and registered in sys.modules (dataclasses need their module there)."""
    file = REPO / path
    spec = importlib.util.spec_from_file_location(file.stem, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[file.stem] = module
    spec.loader.exec_module(module)
    return module


# (name, options): every registered game at its defaults, plus the variants that matter.
GAME_VARIANTS = [(name, {}) for name in jaxgames.available_games()] + [
    ("connect_four", {"rows": 6, "cols": 8}),
    ("connect_four", {"rows": 4, "cols": 4}),
    ("connect_four", {"rows": 10, "cols": 10, "connect": 5}),
    ("connect_four", {"rows": 5, "cols": 9, "connect": 3}),
    ("nim", {"heaps": 4, "size": 7, "max_take": 3}),
    ("nim3p", {"heaps": 2, "size": 4}),
    ("hex", {"size": 2}),
]


def xla_flags(*flags: str) -> dict[str, str]:
    """This process's environment with `flags` added to the XLA_FLAGS it has (tests/conftest.py
    sets some there), for a subprocess that needs more (forced host devices)."""
    return {**os.environ, "XLA_FLAGS": " ".join([os.environ.get("XLA_FLAGS", ""), *flags]).strip()}


def variant_id(variant) -> str:
    name, options = variant
    return name + "".join(f"-{k}{v}" for k, v in sorted(options.items()))


def max_game_length(game: jaxgames.Game) -> int:
    """How many moves random games of `game` are played for: its bound `Game.max_moves`, but
    400 for 2048 (whose bound, 2^17, random play never comes near)."""
    return 400 if game.name == "2048" else game.max_moves


@functools.partial(jax.jit, static_argnames=("game", "num_games", "length", "illegal_prob"))
def random_games(game, num_games: int, length: int, key, illegal_prob: float = 0.0):
    """Plays `num_games` random games of `length` moves, without restarts (ended games stay).

    With probability `illegal_prob` a move is drawn from all actions (so it may be illegal or
    be played on a finished game), otherwise uniformly from the legal ones.

    Returns:
        (actions int32[G, T], states State[G, T]): each action and the state after it.
    """

    def one_game(key):
        def body(state, key):
            k_legal, k_any, k_coin, k_step = jax.random.split(key, 4)
            legal = core.sample_legal(k_legal, state.legal_action_mask)
            anything = jax.random.randint(k_any, (), -1, game.num_actions + 1)
            action = jnp.where(jax.random.uniform(k_coin) < illegal_prob, anything, legal)
            nxt = game.step(state, action, k_step)
            return nxt, (action, nxt)

        init_key, scan_key = jax.random.split(key)
        _, out = jax.lax.scan(body, game.init(init_key), jax.random.split(scan_key, length))
        return out

    return jax.vmap(one_game)(jax.random.split(key, num_games))


SAMPLE_GAMES = 32


def sample_games(game, key):
    """`SAMPLE_GAMES` random games of `max_game_length(game) + 2` moves: one shape per game, so
    the suites that only need some random positions share one compiled driver (the key and
    which games a test looks at vary, the compiled program does not)."""
    return random_games(game, SAMPLE_GAMES, max_game_length(game) + 2, key)


@functools.cache
def jit_step(game):
    """jit(game.step), compiled once per game for all tests."""
    return jax.jit(game.step)


@functools.cache
def batched_step(game):
    """jit(vmap(game.step)), compiled once per game and batch shape for all tests."""
    return jax.jit(jax.vmap(game.step))


def play(game: jaxgames.Game, moves) -> core.State:
    """Plays `moves` from the initial state with the checked (raising) step."""
    state = game.init(jax.random.key(0))
    for move in moves:
        state = core.checked_step(game, state, move)
    return state


def ascii_board(text: str, bottom_first: bool = False) -> np.ndarray:
    """int8 board from an ASCII drawing ('.' empty, 'X' first player, 'O' second player).

    Rows are drawn top line first; with `bottom_first` the last line becomes row 0 (Connect
    Four's convention).
    """
    rows = [line.split() for line in text.strip().splitlines()]
    board = np.array([[".XO".index(c) for c in row] for row in rows], np.int8)
    return board[::-1] if bottom_first else board
