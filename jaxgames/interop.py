"""Our games through pgx's `Env` interface, so that code written for pgx runs on them.

    import jaxgames
    from jaxgames.interop import to_pgx

    env = to_pgx("connect_four")                  # or to_pgx(jaxgames.make("hex", size=9))
    init, step = jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))
    state = init(jax.random.split(jax.random.key(0), 1024))
    state = step(state, actions)                  # pgx's State fields, pgx's rules at the end

The environment is a `pgx.Env` (pgx 2.x, the `bench` extra) and keeps pgx's conventions where
ours differ (see docs/games.md):

* `current_player` is a player *id*, and which id moves first is drawn from the `init` key
  exactly as pgx draws it (`jax.random.bernoulli(key)`; for more than two players a uniform
  id), so that an evaluation loop sees both seats. `seat="fixed"` keeps id 0 first.
* `rewards[i]` is what player id i earned by the step; a step on a terminated state returns it
  unchanged with zero rewards; an illegal action ends the game with reward -1 for the mover
  (pgx's penalty); once the game is over every action is marked legal.
* `observation` is the current player's view. For the games pgx also has with the same rules
  and sizes (Tic-Tac-Toe, Connect Four 6x7, Othello, 2048) it is pgx's own observation, element
  for element, and their actions mean what pgx's mean (2048's directions are renumbered), so
  `env.id` is pgx's id and a network trained on pgx's environment reads our states unchanged.
  For the rest (Hex without the swap rule, other board sizes, Nim) it is our `observe` and the
  id is ours (`"jaxgames/hex(size=6)"`), which pgx's `EnvId` list does not hold.
* `step(state, action, key)` needs `key` for 2048 (the new tile); deterministic games ignore it.

Two rules differ from pgx's own environments (tests/test_interop.py plays both side by side):
pgx's Othello makes both players pass before it ends a game that neither can continue, where
ours ends it at once with the same result; and after an illegal move pgx's games apply the
move to the board anyway, where ours leave the board as it was (the rewards and the end
agree).

Pictures come from `jaxgames.render_svg`: `state.to_svg()` and `state.save_svg(path)` work on
one state or a batch (a strip of boards); pgx's module-level `pgx.save_svg` does not know our
games.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Game
from jaxgames.core import State as GameState

try:
    import pgx
    import pgx.core
    from pgx._src.struct import dataclass as _pgx_dataclass
    from pgx._src.struct import field as _pgx_field
except ImportError:  # pragma: no cover - exercised only without the bench extra
    pgx = None

SEATS = ("random", "fixed")


def _pgx_default(game: Game) -> str | None:
    """pgx's id for `game` when pgx has the same game (rules, sizes, actions), else None."""
    opts = dict(game.options)
    same = {
        "tictactoe": ("tic_tac_toe", {}),
        "connect_four": ("connect_four", {"rows": 6, "cols": 7, "connect": 4}),
        "othello": ("othello", {}),
        "2048": ("2048", {}),
    }.get(game.name)
    if same is None or opts != same[1]:
        return None
    return same[0]


def _our_id(game: Game) -> str:
    opts = ",".join(f"{k}={v}" for k, v in game.options)
    return f"jaxgames/{game.name}({opts})" if opts else f"jaxgames/{game.name}"


# 2048: pgx numbers the directions 0 left, 1 up, 2 right, 3 down; we number 0 up, 1 right,
# 2 down, 3 left.
_2048_OURS_OF_PGX = np.array([3, 0, 1, 2], np.int32)


def _pgx_observation(pgx_id: str | None, game: Game, x: GameState, color: jax.Array) -> jax.Array:
    """The observation of `color` (our player index) in pgx's layout where pgx has the game."""
    obs = game.observe(x, color)
    if pgx_id in ("tic_tac_toe", "connect_four"):
        # pgx: bool[rows, cols, 2], mine then the opponent's, row 0 at the top
        return obs[::-1] if pgx_id == "connect_four" else obs
    if pgx_id == "othello":
        return obs[..., :2]  # pgx has no legal-move plane
    if pgx_id == "2048":
        # pgx: bool[4, 4, 31], one plane per tile exponent 0..30
        return x.board[..., None].astype(jnp.int32) == jnp.arange(31, dtype=jnp.int32)
    return obs


if pgx is not None:

    @_pgx_dataclass
    class PgxState(pgx.core.State):
        """pgx's State fields over one of our states (`_x`); `_first` is the id of the player
        who moves first."""

        current_player: jax.Array = jnp.int32(0)
        observation: jax.Array = jnp.zeros(0, jnp.bool_)
        rewards: jax.Array = jnp.zeros(0, jnp.float32)
        terminated: jax.Array = jnp.bool_(False)
        truncated: jax.Array = jnp.bool_(False)
        legal_action_mask: jax.Array = jnp.zeros(0, jnp.bool_)
        _step_count: jax.Array = jnp.int32(0)
        _first: jax.Array = jnp.int32(0)
        _x: Any = None
        _env: Any = _pgx_field(pytree_node=False, default=None)

        @property
        def env_id(self) -> Any:
            return self._env.id

        def to_svg(self, *, color_theme: Any = None, scale: Any = None) -> str:
            """The board (or, for a batch, a strip of the boards) drawn by `render_svg`."""
            del color_theme, scale
            return self._env.svg(self)

        def save_svg(self, filename: Any, *, color_theme: Any = None, scale: Any = None) -> None:
            del color_theme, scale
            with open(filename, "w", encoding="utf-8") as f:
                f.write(self.to_svg())

    class PgxEnv(pgx.core.Env):
        """One of our games as a `pgx.Env` (see the module docstring for the conventions)."""

        def __init__(self, game: Game, seat: str = "random"):
            super().__init__()
            self.game = game
            self.seat = seat
            self._pgx_id = _pgx_default(game)

        def _init(self, key: jax.Array) -> PgxState:
            n = self.game.num_players
            if n == 1 or self.seat == "fixed":
                first = jnp.int32(0)
            elif n == 2:
                first = jnp.int32(jax.random.bernoulli(key))  # as pgx draws it
            else:
                first = jax.random.randint(key, (), 0, n, jnp.int32)
            x = self.game.init(key)
            return self._wrap(x, first, jnp.int32(0), self._observe_color(x, x.current_player))

        def _wrap(self, x: GameState, first, step_count, observation) -> PgxState:
            n = self.game.num_players
            ids = jnp.arange(n, dtype=jnp.int32)
            return PgxState(
                current_player=(x.current_player + first) % n,
                observation=observation,
                rewards=x.rewards[(ids - first) % n].astype(jnp.float32),
                terminated=x.terminated,
                truncated=jnp.bool_(False),
                legal_action_mask=(
                    x.legal_action_mask[jnp.asarray(_2048_OURS_OF_PGX)]
                    if self._pgx_id == "2048"
                    else x.legal_action_mask
                ),
                _step_count=step_count,
                _first=first,
                _x=x,
                _env=self,
            )

        def _step(self, state: PgxState, action: jax.Array, key: jax.Array | None) -> PgxState:
            if key is None:
                if self.game.stochastic:
                    raise ValueError(
                        f"{self.game.name} is stochastic: pass a key, step(state, action, key)"
                    )
                key = jax.random.key(0)  # unused by deterministic games
            action = jnp.asarray(action, jnp.int32)
            if self._pgx_id == "2048":
                action = jnp.asarray(_2048_OURS_OF_PGX)[action]
            x = self.game.step(state._x, action, key)
            return self._wrap(x, state._first, state._step_count, state.observation)

        def _observe_color(self, x: GameState, color: jax.Array) -> jax.Array:
            return _pgx_observation(self._pgx_id, self.game, x, color)

        def _observe(self, state: PgxState, player_id: jax.Array) -> jax.Array:
            n = self.game.num_players
            return self._observe_color(state._x, (player_id - state._first) % n)

        def svg(self, state: PgxState) -> str:
            from jaxgames.render import render_svg, tile

            xs = jax.device_get(state._x)
            batch = np.shape(xs.terminated)
            if batch == ():
                return render_svg(self.game, xs)
            flat = jax.tree.map(lambda a: np.reshape(a, (-1, *np.shape(a)[len(batch) :])), xs)
            frames = [
                render_svg(self.game, jax.tree.map(lambda a, i=i: a[i], flat))
                for i in range(int(np.prod(batch)))
            ]
            return tile(frames, 8)

        @property
        def id(self) -> Any:
            return self._pgx_id or _our_id(self.game)

        @property
        def version(self) -> str:
            return f"jaxgames-v{self.game.version}"

        @property
        def num_players(self) -> int:
            return self.game.num_players

        def __hash__(self) -> int:  # a static pytree field: hash and compare by identity
            return id(self)

        def __eq__(self, other: object) -> bool:
            return self is other


@functools.cache
def _env(game: Game, seat: str) -> Any:
    return PgxEnv(game, seat)


def to_pgx(game: Game | str, seat: str = "random", **options: Any) -> Any:
    """`game` (a Game, or a registry name with `options`) as a `pgx.Env`.

    Args:
        game: one of our games, or its name for `jaxgames.make`.
        seat: "random" draws which player id moves first from the `init` key, as pgx does;
            "fixed" keeps id 0 first (our convention).
        **options: the game's options when `game` is a name.

    Returns:
        A `pgx.Env` (one object per game and seat).

    Raises:
        ImportError: pgx is not installed (`pip install "jaxgames[bench]"`).
        ValueError: `seat` is neither "random" nor "fixed".
    """
    if pgx is None:
        raise ImportError('to_pgx needs pgx: pip install "jaxgames[bench]" (or pgx>=2.4)')
    if seat not in SEATS:
        raise ValueError(f"seat={seat!r}: expected one of {', '.join(SEATS)}")
    if isinstance(game, str):
        import jaxgames

        game = jaxgames.make(game, **options)
    elif options:
        raise ValueError(f"options {sorted(options)} given with a Game: pass them to make()")
    return _env(game, seat)
