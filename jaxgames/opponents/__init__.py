"""Opponents: batched policies `policy(states, key) -> actions` to play and evaluate against.

`make_opponent(name, game)` resolves the names used in configs and on the command line:

* `random`: uniformly random legal moves;
* `perfect`: exhaustive Max-N for small games (TicTacToe, Nim, Nim3P), AB for Connect Four;
* `perfect-dl`: AB-DL for Connect Four (postpones losses as long as possible);
* `perfect-dl-gbg`: our model of the AB-DL of GBG's published Connect Four results (it tells
  distant losses apart less finely; see `jaxgames.opponents.connect_four`);
* `mcts:N`: Monte Carlo tree search with N simulations per move (1- and 2-player games);
* `heur`, `bench`: Othello's one-ply positional players (weighted squares).

Unknown names raise a ValueError listing the names available for that game.
"""

from __future__ import annotations

import numpy as np

from jaxgames.core import Game
from jaxgames.opponents import perfect
from jaxgames.opponents.connect_four import ab_policy, connect_four_scores, perfect_player
from jaxgames.opponents.mcts import mcts_policy
from jaxgames.opponents.othello import positional_policy
from jaxgames.opponents.perfect import perfect_policy
from jaxgames.opponents.random import epsilon_greedy, random_policy

# Connect Four's perfect opponents: name -> the solver player's style
_CONNECT_FOUR_STYLES = {"perfect": "ab", "perfect-dl": "dl", "perfect-dl-gbg": "gbg-dl"}


def _is_solvable_connect_four(game: Game) -> bool:
    opts = dict(game.options)
    return (
        game.name == "connect_four"
        and opts["connect"] == 4
        and opts["cols"] * (opts["rows"] + 1) <= 64
    )


def opponent_names(game: Game) -> list[str]:
    """The opponent names available for `game`."""
    names = ["random"]
    if _is_solvable_connect_four(game):
        names += list(_CONNECT_FOUR_STYLES)
    elif perfect.supports(game):
        names.append("perfect")
    if game.name == "othello":
        names += ["heur", "bench"]
    if game.num_players <= 2:
        names.append("mcts:N")
    return names


def perfect_values(game: Game):
    """Host function `values(state) -> float64[num_actions]`: the perfect-play value of each
    move for the player to move (NaN for illegal moves): win 1, draw 0, loss -1 for Connect
    Four (how fast does not count), the Max-N reward-to-come for the small games.

    Raises:
        ValueError: no perfect player for `game`.
    """
    if _is_solvable_connect_four(game):
        opts = dict(game.options)
        player = perfect_player(opts["rows"], opts["cols"])

        def connect_four(state) -> np.ndarray:
            scores = player.move_scores(np.asarray(state.board))
            return np.asarray([np.nan if s is None else np.sign(s) for s in scores], np.float64)

        return connect_four
    if perfect.supports(game):

        def max_n(state) -> np.ndarray:
            values = perfect.move_values(game, state)[:, int(state.current_player)]
            return np.asarray(values, np.float64)

        return max_n
    raise ValueError(
        f"no perfect player for {game!r}; there is one for tictactoe, nim, nim3p and "
        "connect_four (connect 4, cols * (rows + 1) <= 64)"
    )


MAX_SIMULATIONS = 1_000_000


def check_opponent(name: str, game: Game) -> None:
    """Raises ValueError unless `name` is an opponent of `game` (cheap: builds nothing)."""
    available = opponent_names(game)
    if name.startswith("mcts:") and "mcts:N" in available:
        count = name.split(":", 1)[1]
        if not (count.isascii() and count.isdigit()) or not 1 <= int(count) <= MAX_SIMULATIONS:
            raise ValueError(
                f"opponent {name!r}: N in mcts:N must be an integer from 1 to {MAX_SIMULATIONS:,}"
            )
        return
    if name not in available:
        raise ValueError(
            f"unknown opponent {name!r} for {game!r}; available: {', '.join(available)}"
        )


def make_opponent(name: str, game: Game):
    """The batched policy called `name` for `game` (ValueError for unknown names)."""
    check_opponent(name, game)
    if name.startswith("mcts:"):
        return mcts_policy(game, int(name.split(":", 1)[1]))
    if name == "random":
        return random_policy
    if name in ("heur", "bench"):
        return positional_policy(game, name)
    if _is_solvable_connect_four(game):
        return ab_policy(game, _CONNECT_FOUR_STYLES[name])
    return perfect_policy(game)


__all__ = [
    "ab_policy",
    "check_opponent",
    "connect_four_scores",
    "epsilon_greedy",
    "make_opponent",
    "mcts_policy",
    "opponent_names",
    "perfect_policy",
    "perfect_values",
    "positional_policy",
    "random_policy",
]
