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
from jax.sharding import NamedSharding, PartitionSpec

from jaxgames import parallel
from jaxgames.core import Game, State
from jaxgames.policies import ParamPolicy, Policy, as_param_policy

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


MAX_OPENINGS = 100_000
MAX_ARENA_GAMES = 10_000_000


def opening_moves(game: Game, plies: int) -> list[tuple[int, ...]]:
    """All legal move sequences of length `plies` from the empty board (games not yet over).

    Raises:
        ValueError: more than MAX_OPENINGS of them (so few plies, in games with many moves,
            make more than any evaluation should play).
    """
    from jaxgames.core import checked_step, legal_actions

    out = []

    def walk(state, prefix):
        if len(prefix) == plies:
            out.append(tuple(prefix))
            if len(out) > MAX_OPENINGS:
                raise ValueError(
                    f"{game.name} has more than {MAX_OPENINGS:,} openings of {plies} plies: "
                    "ask for fewer plies"
                )
            return
        for a in legal_actions(state):
            nxt = checked_step(game, state, a)
            if not bool(nxt.terminated):
                walk(nxt, [*prefix, a])

    if plies > game.max_moves:
        raise ValueError(
            f"{plies} plies of openings: no {game.name} game is longer than {game.max_moves} moves"
        )
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
    devices: int = 1,
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
        devices: split the games over this many of the visible devices (0: all of them; the
            most, up to that, whose number divides the number of games), the policies'
            parameters on every one (`jaxgames.parallel`). Random moves and chance are the
            same as on one device; a policy's values may differ in the last bit (XLA orders a
            sum by the shapes it compiles for), which can break a tie between equal moves
            the other way.

    Returns:
        ArenaResult with the overall result, one per agent seat, and the agent's score and
        the final board of every game.
    """
    if isinstance(opponents, ParamPolicy) or not isinstance(opponents, list | tuple):
        others = [opponents] * (game.num_players - 1)  # one for every other seat
    else:
        others = list(opponents)
    if len(others) != game.num_players - 1:
        raise ValueError(f"{game.name} needs {game.num_players - 1} opponent(s), got {len(others)}")
    if games_per_seat < 1:
        raise ValueError(f"games_per_seat must be >= 1, got {games_per_seat}")
    total = games_per_seat * len(seatings(game.num_players, seats)) * max(1, len(openings or ()))
    if total > MAX_ARENA_GAMES:
        raise ValueError(
            f"{total:,} games ({games_per_seat:,} per seat and opening) are more than one "
            f"evaluation plays ({MAX_ARENA_GAMES:,}); ask for fewer"
        )
    policies = [as_param_policy(p) for p in (agent, *others)]  # type: ignore[arg-type]
    plans = seatings(game.num_players, seats)
    openings = [()] if not openings else [tuple(o) for o in openings]
    starts = _opening_states(game, openings)
    plan_of_game: list[tuple[int, ...]] = []
    start_index: list[int] = []
    for plan in plans:
        for o in range(len(openings)):
            plan_of_game += [plan] * games_per_seat
            start_index += [o] * games_per_seat
    assign = jnp.asarray(plan_of_game, jnp.int32)
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
        games = len(plan_of_game)  # with several processes each plays them all on its own
        on = parallel.divisor_devices(games, devices, "devices", local=True) if devices != 1 else []
        if len(on) > 1:  # the games split over a mesh, the parameters replicated
            mesh = parallel.make_mesh(on)
            split = NamedSharding(mesh, PartitionSpec(parallel.AXIS))
            whole = NamedSharding(mesh, PartitionSpec())
            assign, start = jax.device_put((assign, start), split)
            params, key = jax.device_put((params, key), whole)
            with jax.set_mesh(mesh):
                rewards, done, boards = _play(game, fns, params, assign, start, key, max_moves)
        else:
            rewards, done, boards = _play(game, fns, params, assign, start, key, max_moves)
    rewards, done, seats_of = np.asarray(rewards), np.asarray(done), np.asarray(assign)
    if not done.all():
        raise RuntimeError(f"{int((~done).sum())} games did not end within {max_moves} moves")
    agent_player = np.argmax(seats_of == 0, axis=1)
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
