"""The arena: any batched policies, every seat, lockstep games, results with 95% intervals.

`arena(game, agent, opponents, games_per_seat, key)` plays the agent in every seat (with the
opponents filling the other seats in turn order), all games of all seatings in one lockstep
batch, each game from the empty board or from given opening move sequences. A policy is only
asked to move in games where it is to move: in the other games it sees the states with
`terminated` set and an empty `legal_action_mask` (host-side policies can skip them).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Game, State
from jaxgames.selfplay import ParamPolicy, Policy, as_param_policy

Z95 = 1.959963984540054


@dataclasses.dataclass(frozen=True)
class Result:
    """The agent's results over some games.

    Attributes:
        games, wins, draws, losses: counts (win = the agent alone has the top reward;
            draw = several players share the top reward and the agent is among them).
        score: the agent's mean final reward.
        ci95: half-width of the 95% interval of `score` (normal approximation).
        win_rate: wins / games, with `win_ci95` its 95% Wilson half-width.
        points: (wins + draws / 2) / games, the share of points with a draw worth half. For
            two players with rewards +1 / 0 / -1 it is (score + 1) / 2, the "win rate" of
            GBG's plots and tables (its Connect Four AB-DL 0.935, for one).
    """

    games: int
    wins: int
    draws: int
    losses: int
    score: float
    ci95: float
    win_rate: float
    win_ci95: float
    points: float

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def __str__(self) -> str:
        return (
            f"score {self.score:+.3f} +- {self.ci95:.3f}, win {self.win_rate:.3f}, "
            f"points {self.points:.3f} "
            f"(W/D/L {self.wins}/{self.draws}/{self.losses} of {self.games})"
        )


def summarize(rewards: np.ndarray, agent_rewards_sole_top: np.ndarray, shared_top: np.ndarray):
    """Result from per-game agent rewards and outcome flags."""
    n = len(rewards)
    wins = int(np.sum(agent_rewards_sole_top))
    draws = int(np.sum(shared_top))
    score = float(np.mean(rewards)) if n else 0.0
    ci = float(Z95 * np.std(rewards, ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
    p = wins / n if n else 0.0
    # Wilson interval half-width for the win rate.
    denom = 1 + Z95**2 / n if n else 1.0
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / denom if n else float("nan")
    points = (wins + draws / 2) / n if n else 0.0
    return Result(n, wins, draws, n - wins - draws, score, ci, p, half, points)


@dataclasses.dataclass(frozen=True)
class ArenaResult:
    """Results overall and by the agent's seat (player index); per game, the agent's score,
    the final board, the agent's player index and (with `record_moves`) the moves."""

    overall: Result
    by_seat: dict[int, Result]
    scores: np.ndarray | None = dataclasses.field(default=None, compare=False, repr=False)
    final_boards: np.ndarray | None = dataclasses.field(default=None, compare=False, repr=False)
    agent_players: np.ndarray | None = dataclasses.field(default=None, compare=False, repr=False)
    moves: tuple[tuple[int, ...], ...] | None = dataclasses.field(
        default=None, compare=False, repr=False
    )
    opening_plies: np.ndarray | None = dataclasses.field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict:
        return {
            **self.overall.to_dict(),
            "by_seat": {str(s): r.to_dict() for s, r in self.by_seat.items()},
        }

    def score_quantiles(self) -> dict:
        """The agent's per-game scores: median, lowest and best (for one-player games such
        as 2048, where the score is the result)."""
        scores = np.asarray(self.scores, np.float64)
        return {
            "median": float(np.median(scores)),
            "min": float(scores.min()),
            "max": float(scores.max()),
        }


def seatings(num_players: int, seats: str | Sequence[int] = "all") -> list[tuple[int, ...]]:
    """Seat assignments: tuple t maps player index -> policy index (0 = the agent).

    With two opponents or more, every ordering of the opponents is used for each agent seat.
    `seats`: "all", "first" (agent is player 0), "second" (player 1), or explicit players.
    """
    if seats == "all":
        agent_seats = list(range(num_players))
    elif seats == "first":
        agent_seats = [0]
    elif seats == "second":
        agent_seats = [1]
    else:
        agent_seats = [int(s) for s in seats]
    bad = [s for s in agent_seats if not 0 <= s < num_players]
    if bad:
        raise ValueError(f"seat(s) {bad} out of range for a {num_players}-player game")
    out = []
    for seat in agent_seats:
        for others in itertools.permutations(range(1, num_players)):
            order = list(others)
            order.insert(seat, 0)
            out.append(tuple(order))
    return out


def _opening_states(game: Game, openings: Sequence[Sequence[int]]) -> State:
    """States after each opening move sequence (batched), played with the checked step."""
    from jaxgames.core import checked_step

    states = []
    for moves in openings:
        state = game.init(jax.random.key(0))
        for move in moves:
            state = checked_step(game, state, int(move))
        states.append(state)
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def opening_moves(game: Game, plies: int) -> list[tuple[int, ...]]:
    """All legal move sequences of length `plies` from the empty board (games not yet over)."""
    from jaxgames.core import checked_step, legal_actions

    out = []

    def walk(state, prefix):
        if len(prefix) == plies:
            out.append(tuple(prefix))
            return
        for a in legal_actions(state):
            nxt = checked_step(game, state, a)
            if not bool(nxt.terminated):
                walk(nxt, [*prefix, a])

    walk(game.init(jax.random.key(0)), [])
    return out


def _turn(game: Game, fns: tuple, params: tuple, assign: jax.Array, states: State, key):
    """One move in every unfinished game: (next states, the moves played, next key)."""
    key, *policy_keys = jax.random.split(key, len(fns) + 1)
    mover_policy = jnp.take_along_axis(assign, states.current_player[:, None], 1)[:, 0]
    actions = jnp.zeros_like(states.current_player)
    for i, (fn, pkey) in enumerate(zip(fns, policy_keys, strict=True)):
        mine = (mover_policy == i) & ~states.terminated
        view = states.replace(
            terminated=~mine,
            legal_action_mask=states.legal_action_mask & mine[:, None],
        )
        actions = jnp.where(mine, fn(params[i], view, pkey).astype(jnp.int32), actions)
    nxt = jax.vmap(game.step, in_axes=(0, 0, 0))(
        states, actions, jax.random.split(key, actions.shape[0])
    )
    return nxt, actions, key


@functools.partial(jax.jit, static_argnames=("game", "fns", "max_moves"))
def _play(
    game: Game,
    fns: tuple,
    params: tuple,
    assign: jax.Array,
    start: State,
    key: jax.Array,
    max_moves: int,
):
    """Plays all games to the end. assign: int32[B, N] policy index of each player."""

    def body(carry):
        states, rewards, key, t = carry
        nxt, _, key = _turn(game, fns, params, assign, states, key)
        return nxt, rewards + nxt.rewards, key, t + 1

    def cond(carry):
        states, _, _, t = carry
        return (~jnp.all(states.terminated)) & (t < max_moves)

    rewards = jnp.zeros(start.rewards.shape, jnp.float32)
    states, rewards, _, _ = jax.lax.while_loop(cond, body, (start, rewards, key, 0))
    return rewards, states.terminated, states.board


_jit_turn = jax.jit(_turn, static_argnames=("game", "fns"))


def _play_recorded(game, fns, params, assign, start, key, max_moves, openings):
    """`_play` move by move from the host, the same games (same keys), also returning every
    game's moves (its opening's, then the ones played)."""
    states = start
    rewards = np.zeros(start.rewards.shape, np.float32)
    moves = [list(o) for o in openings]
    for _ in range(max_moves):
        was_over = np.asarray(states.terminated)
        if was_over.all():
            break
        states, actions, key = _jit_turn(game, fns, params, assign, states, key)
        rewards += np.asarray(states.rewards)
        actions = np.asarray(actions)
        for i in np.flatnonzero(~was_over):
            moves[i].append(int(actions[i]))
    return rewards, states.terminated, states.board, tuple(tuple(m) for m in moves)


def arena(
    game: Game,
    agent: Policy | ParamPolicy,
    opponents: Policy | ParamPolicy | Sequence[Policy | ParamPolicy],
    games_per_seat: int,
    key: jax.Array,
    seats: str | Sequence[int] = "all",
    openings: Sequence[Sequence[int]] | None = None,
    max_moves: int = 1_000_000,
    record_moves: bool = False,
) -> ArenaResult:
    """Plays `agent` against `opponents` in every seat.

    Args:
        game: the game.
        agent: batched policy of the agent (plain, or a ParamPolicy to avoid recompiling
            when only its parameters change).
        opponents: one policy for all other seats, or one per other seat (N - 1).
        games_per_seat: games per seating (and per opening, when openings are given).
        key: PRNG key.
        seats: which seats the agent takes ("all", "first", "second", or player indices).
        openings: optional move sequences to start from (e.g. `opening_moves(game, 1)`);
            each seating plays `games_per_seat` games from each.
        max_moves: safety bound on game length.
        record_moves: also return every game's moves (plays move by move from the host,
            slower; the games are the same as without).

    Returns:
        ArenaResult with the overall result, one per agent seat, and the agent's score and
        the final board of every game.
    """
    if isinstance(opponents, ParamPolicy) or not isinstance(opponents, list | tuple):
        opponents = [opponents] * (game.num_players - 1)  # one for every other seat
    if len(opponents) != game.num_players - 1:
        raise ValueError(
            f"{game.name} needs {game.num_players - 1} opponent(s), got {len(opponents)}"
        )
    if games_per_seat < 1:
        raise ValueError(f"games_per_seat must be >= 1, got {games_per_seat}")
    policies = [as_param_policy(p) for p in (agent, *opponents)]
    plans = seatings(game.num_players, seats)
    openings = [()] if not openings else [tuple(o) for o in openings]
    starts = _opening_states(game, openings)
    assign, start_index = [], []
    for plan in plans:
        for o in range(len(openings)):
            assign += [plan] * games_per_seat
            start_index += [o] * games_per_seat
    assign = jnp.asarray(assign, jnp.int32)
    start = jax.tree.map(lambda x: x[np.asarray(start_index)], starts)
    fns = tuple(p.fn for p in policies)
    params = tuple(p.params for p in policies)
    moves = None
    if record_moves:
        game_openings = [openings[o] for o in start_index]
        rewards, done, boards, moves = _play_recorded(
            game, fns, params, assign, start, key, max_moves, game_openings
        )
    else:
        rewards, done, boards = _play(game, fns, params, assign, start, key, max_moves)
    rewards, done, assign = np.asarray(rewards), np.asarray(done), np.asarray(assign)
    if not done.all():
        raise RuntimeError(f"{int((~done).sum())} games did not end within {max_moves} moves")
    agent_player = np.argmax(assign == 0, axis=1)
    mine = rewards[np.arange(len(rewards)), agent_player]
    top = rewards.max(axis=1)
    at_top = rewards == top[:, None]
    sole = (mine == top) & (at_top.sum(1) == 1)
    shared = (mine == top) & (at_top.sum(1) > 1)
    by_seat = {
        int(s): summarize(
            mine[agent_player == s], sole[agent_player == s], shared[agent_player == s]
        )
        for s in np.unique(agent_player)
    }
    return ArenaResult(
        summarize(mine, sole, shared),
        by_seat,
        mine,
        np.asarray(boards),
        agent_player,
        moves,
        np.asarray([len(openings[o]) for o in start_index]),
    )


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
