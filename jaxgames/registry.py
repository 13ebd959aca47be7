"""`make(name, **options)` and `available_games()`: the one way to get a Game.

Each registered game lists its options with defaults and the range of valid values, so a bad name,
an unknown option or an out-of-range value raises a `ValueError` saying what is valid. The
registry stamps the resolved options onto the record (`Game.options`, sorted by name), and
equal option sets return the same (cached) `Game` object, so jitted code keyed on it compiles
once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from jaxgames.core import Game


@dataclasses.dataclass(frozen=True)
class Option:
    """An integer game option with its default and inclusive bounds."""

    default: int
    low: int
    high: int
    doc: str


@dataclasses.dataclass(frozen=True)
class Entry:
    factory: Callable[..., Game]
    options: dict[str, Option]
    check: Callable[[dict[str, int]], str | None] | None = None


_REGISTRY: dict[str, Entry] = {}
_GAMES: dict[tuple, Game] = {}  # one record per name and option set, its options stamped on


def register(
    name: str,
    factory: Callable[..., Game],
    options: dict[str, Option] | None = None,
    check: Callable[[dict[str, int]], str | None] | None = None,
) -> None:
    """Adds a game. `check(resolved_options)` returns an error message for bad combinations."""
    _REGISTRY[name] = Entry(factory, dict(options or {}), check)


def _register_games() -> None:
    """Imports the package's games (each registers itself) the first time one is asked for."""
    import jaxgames.games  # noqa: F401


def available_games() -> list[str]:
    """The registered game names, sorted."""
    _register_games()
    return sorted(_REGISTRY)


def game_options(name: str) -> dict[str, Option]:
    """The options of a registered game (name -> Option)."""
    return dict(_lookup(name).options)


def _lookup(name: str) -> Entry:
    _register_games()
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(f"unknown game {name!r}; available games: {', '.join(available_games())}")
    return _REGISTRY[name]


def resolve_options(name: str, options: dict[str, Any]) -> dict[str, int]:
    """Validates `options` for game `name` and fills in the defaults."""
    entry = _lookup(name)
    unknown = sorted(set(options) - set(entry.options))
    if unknown:
        valid = ", ".join(f"{k} (default {o.default})" for k, o in entry.options.items())
        raise ValueError(
            f"unknown option(s) {', '.join(unknown)} for game {name!r}; "
            f"valid options: {valid or 'none'}"
        )
    resolved = {}
    for key, opt in entry.options.items():
        value = options.get(key, opt.default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(
                f"option {key}={value!r} of game {name!r} must be an integer in "
                f"[{opt.low}, {opt.high}] ({opt.doc})"
            )
        if not opt.low <= value <= opt.high:
            raise ValueError(
                f"option {key}={value} of game {name!r} is out of range; expected an integer in "
                f"[{opt.low}, {opt.high}] ({opt.doc})"
            )
        resolved[key] = int(value)
    if entry.check is not None and (problem := entry.check(resolved)):
        raise ValueError(f"invalid options for game {name!r}: {problem}")
    return resolved


def make(name: str, **options: Any) -> Game:
    """Returns the game `name` with the given options.

    Raises:
        ValueError: unknown name (lists the available games), unknown option (lists the valid
            ones) or a value out of range (states the valid range).
    """
    resolved = resolve_options(name, options)
    key = (name, tuple(sorted(resolved.items())))
    if key not in _GAMES:
        game = _lookup(name).factory(**resolved)
        _GAMES[key] = dataclasses.replace(game, options=key[1])
    return _GAMES[key]
