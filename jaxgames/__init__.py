"""jaxgames: board games as pure, jittable JAX functions, and the learners that play them."""

from jaxgames import games as _games  # noqa: F401  (registers the games)
from jaxgames.core import Game, State, checked_step, legal_actions
from jaxgames.registry import available_games, make

__version__ = "0.1.0"


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
]
