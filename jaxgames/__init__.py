"""jaxgames: board games as pure, jittable JAX functions, and the learners that play them.

    game = jaxgames.make("connect_four")        # a Game: pure, unbatched, jittable functions
    agent = jaxgames.load("runs/tictactoe-td-farl")   # a trained agent

The names below are imported on first use, so that `jaxgames --help` starts without JAX.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

_LAZY = {
    "Game": "jaxgames.core",
    "State": "jaxgames.core",
    "checked_step": "jaxgames.core",
    "legal_actions": "jaxgames.core",
    "available_games": "jaxgames.registry",
    "make": "jaxgames.registry",
    "render_svg": "jaxgames.render",
}

if TYPE_CHECKING:
    from jaxgames.core import Game, State, checked_step, legal_actions
    from jaxgames.registry import available_games, make
    from jaxgames.render import render_svg


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'jaxgames' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def load(path, weights="average"):
    """Loads a trained agent from a run folder or checkpoint (see `jaxgames.agent.load`);
    `weights="last"` for the latest parameters of a run that averaged them."""
    from jaxgames.agent import load as _load

    return _load(path, weights)


__all__ = [
    "Game",
    "State",
    "__version__",
    "available_games",
    "checked_step",
    "legal_actions",
    "load",
    "make",
    "render_svg",
]
