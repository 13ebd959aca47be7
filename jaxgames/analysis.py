"""Analysis of trained agents beyond win rates: mistakes against perfect play, the UCI
Connect-4 set, 2048's tile milestones.

* `mistakes(game, result, values)`: the positions of an arena run where the agent's move lost
  value against a perfect player's values, most frequent first (`jaxgames eval --mistakes`);
* `uci_connect4_accuracy` / `uci_connect4_versus`: how well an agent's values predict the UCI
  Connect-4 labels, and how it plays from those positions (the capstone report's protocol);
* `tile_shares(boards)`: the share of 2048 games whose highest tile reached each milestone.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Game
from jaxgames.evaluation import ArenaResult, Result, _play, summarize
from jaxgames.policies import ParamPolicy, Policy, as_param_policy

TILE_MILESTONES = (512, 1024, 2048, 4096, 8192, 16384, 32768)


def tile_shares(boards) -> dict[int, float]:
    """{tile: share of the boards whose highest tile is at least that tile} (host-side), for
    boards of tile exponents [games, ...]: the distribution GBG reports for 2048."""
    boards = np.asarray(boards).reshape(len(boards), -1)
    top = 2 ** boards.max(axis=1).astype(np.int64)  # an empty board counts 1, below every milestone
    return {tile: float(np.mean(top >= tile)) for tile in TILE_MILESTONES}


@dataclasses.dataclass(frozen=True)
class Mistake:
    """A position where the agent's move lost value against perfect play.

    Attributes:
        moves: the position, as the moves from the empty board.
        action: the agent's move.
        values: perfect-play value of every move for the mover (NaN: illegal).
        games: in how many games the agent made this move here.
    """

    moves: tuple[int, ...]
    action: int
    values: tuple[float, ...]
    games: int

    def to_dict(self) -> dict:
        values = [None if math.isnan(v) else v for v in self.values]
        return {
            "moves": list(self.moves),
            "action": self.action,
            "values": values,
            "games": self.games,
        }


@dataclasses.dataclass(frozen=True)
class MistakeReport:
    """Where the agent left perfect play in some arena games.

    Attributes:
        games: games analysed; games_with_mistakes: those with at least one mistake.
        agent_moves: the agent's moves analysed; mistakes: those that lost value.
        positions: every distinct mistake, the most frequent first.
    """

    games: int
    games_with_mistakes: int
    agent_moves: int
    mistakes: int
    positions: tuple[Mistake, ...]

    def to_dict(self, top: int | None = None) -> dict:
        return {
            "games": self.games,
            "games_with_mistakes": self.games_with_mistakes,
            "agent_moves": self.agent_moves,
            "mistakes": self.mistakes,
            "positions": [m.to_dict() for m in self.positions[:top]],
        }


def mistakes(game: Game, result: ArenaResult, values) -> MistakeReport:
    """The agent's moves in `result` (an `arena(..., record_moves=True)` result) that lost
    value against perfect play: moves whose perfect-play value for the agent is below the
    best move's. Opening moves are not the agent's and are skipped.

    Args:
        game: the game the arena played.
        result: the arena's result, with moves.
        values: host function `values(state) -> float[num_actions]`, the perfect-play value
            of each move for the player to move, NaN for illegal moves (for instance
            `jaxgames.opponents.perfect_values(game)`).

    Raises:
        ValueError: the result has no moves (the arena ran without `record_moves`).
    """
    from jaxgames.core import checked_step

    if result.moves is None:
        raise ValueError(
            "mistakes() needs an arena result with moves: arena(..., record_moves=True)"
        )
    counts: dict[tuple, int] = {}
    found: dict[tuple, Mistake] = {}  # the first sighting of each (position, move)
    games_with, agent_moves, total = 0, 0, 0
    for moves, seat, opening in zip(
        result.moves, result.agent_players, result.opening_plies, strict=True
    ):
        state = game.init(jax.random.key(0))
        erred = False
        for ply, action in enumerate(moves):
            if ply >= opening and int(state.current_player) == int(seat):
                agent_moves += 1
                v = np.asarray(values(state), np.float64)
                if v[action] < np.nanmax(v) - 1e-6:
                    total += 1
                    erred = True
                    key = (moves[:ply], action)
                    counts[key] = counts.get(key, 0) + 1
                    if key not in found:
                        found[key] = Mistake(moves[:ply], action, tuple(map(float, v)), 0)
            state = checked_step(game, state, action)
        games_with += erred
    positions = sorted(
        (dataclasses.replace(found[k], games=c) for k, c in counts.items()),
        key=lambda m: (-m.games, len(m.moves), m.moves),
    )
    return MistakeReport(len(result.moves), games_with, agent_moves, total, tuple(positions))


def uci_connect4_accuracy(
    values,
    boards: np.ndarray,
    outcomes: np.ndarray,
    game: Game,
    draw_band: float = 0.1,
    batch_size: int = 4096,
) -> dict:
    """How well an agent's values predict the UCI Connect-4 labels.

    Args:
        values: batched `values(states) -> float32[B]`, the agent's value of each position for
            the player to move (the first player in every UCI position).
        boards, outcomes: `jaxgames.datasets.load_uci_connect4()`.
        game: the 6x7 connect_four game.
        draw_band: values with |v| below it predict a draw (for the three-way accuracy).

    Returns:
        {"decisive_accuracy": sign accuracy over won and lost positions,
         "three_way_accuracy": accuracy over all positions with the draw band,
         "positions": count}
    """
    from jaxgames.games.connect_four import state_from_board

    fn = jax.jit(lambda b: values(state_from_board(game, b)))
    predicted = np.concatenate(
        [np.asarray(fn(boards[i : i + batch_size])) for i in range(0, len(boards), batch_size)]
    )
    decisive = outcomes != 0
    sign = np.sign(predicted)
    three = np.where(np.abs(predicted) < draw_band, 0, sign)
    return {
        "decisive_accuracy": float(np.mean(sign[decisive] == outcomes[decisive])),
        "three_way_accuracy": float(np.mean(three == outcomes)),
        "positions": len(outcomes),
    }


def uci_connect4_versus(
    game: Game,
    agent: Policy | ParamPolicy,
    opponent: Policy | ParamPolicy,
    boards: np.ndarray,
    key: jax.Array,
    batch_size: int = 8192,
) -> Result:
    """Seed 003's protocol: the agent (the first player, to move) plays every UCI position to
    the end against `opponent`. Returns the agent's Result over all positions."""
    from jaxgames.games.connect_four import state_from_board

    policies = [as_param_policy(agent), as_param_policy(opponent)]
    fns = tuple(p.fn for p in policies)
    params = tuple(p.params for p in policies)
    rewards = []
    for i, start in enumerate(range(0, len(boards), batch_size)):
        chunk = boards[start : start + batch_size]
        states = state_from_board(game, chunk)
        assign = jnp.tile(jnp.asarray([[0, 1]], jnp.int32), (len(chunk), 1))
        r, done, _ = _play(game, fns, params, assign, states, jax.random.fold_in(key, i), 10_000)
        assert bool(jnp.all(done))
        rewards.append(np.asarray(r)[:, 0])
    mine = np.concatenate(rewards)
    return summarize(mine, mine > 0, mine == 0)
