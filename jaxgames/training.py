"""From a Config to a trained agent: builders, the jitted chunk, and the host loop.

`make_learner(config)` builds everything static (game, approximator, learner settings) and
returns a `Learner` with `init(key)` and a jitted, carry-donating `chunk(carry)` that advances all
B games `chunk_steps` lockstep moves. `train(config)` is the host loop: it only iterates over
chunks, and between them reports progress, evaluates and hands the carry to callbacks.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

import jaxgames
from jaxgames import evaluation
from jaxgames.approximators import ValueModel, ntuple, ntuple_model, tabular
from jaxgames.config import Config
from jaxgames.core import Game
from jaxgames.learning import farl
from jaxgames.learning.targets import horizon
from jaxgames.opponents import make_opponent


def build_game(config: Config) -> Game:
    return jaxgames.make(config.game.name, **config.game.options)


def build_tuples(config: Config, game: Game) -> list[list[int]]:
    """The configured tuples, or seeded random walks over the board's neighbourhoods."""
    ap = config.approximator
    if ap.tuples is not None:
        return [list(t) for t in ap.tuples]
    key = jax.random.key(ap.tuple_seed)
    return ntuple.random_walk_tuples(
        game.board_spec.neighbours, ap.num_tuples, ap.tuple_length, key
    )


def build_model(config: Config, game: Game) -> ValueModel:
    """The approximator of `config` bound to `game`."""
    ap = config.approximator
    outputs = 1 if config.algorithm.kind == "td" else game.num_actions
    if game.board_spec is None:
        raise ValueError(f"{game!r} has no board description for table-based approximators")
    if ap.kind == "tabular":
        net = tabular.make_tabular(
            game.board_spec, game.num_players, outputs, ap.symmetries, ap.output
        )
    else:
        net = ntuple.make_ntuple(
            game.board_spec,
            build_tuples(config, game),
            game.num_players,
            outputs,
            symmetries=ap.symmetries,
            output=ap.output,
            tcl=ap.tcl,
            tcl_beta=ap.tcl_beta,
            tcl_init=ap.tcl_init,
        )
    return ntuple_model(game, net, ap.combine)


def build_spec(config: Config) -> farl.LearnerSpec:
    a, t = config.algorithm, config.train
    return farl.LearnerSpec(
        kind=a.kind,
        gamma=a.gamma,
        lam=a.lam,
        horizon=horizon(a.lam, a.horizon_cut),
        farl_others=a.farl_others,
        farl_terminal=a.farl_terminal,
        learn_from_random_moves=a.learn_from_random_moves,
        reset_on_random=a.reset_on_random,
        win_first=a.win_first,
        random_opening_moves=a.random_opening_moves,
        alpha=a.alpha.resolve(t.games),
        epsilon=a.epsilon.resolve(t.games),
        batch_size=t.batch_size,
    )


def chunk_steps(config: Config) -> int:
    """Lockstep steps per jitted chunk: the configured value, or automatic: up to 20k moves
    per chunk, and few enough that a run overshoots its game budget by only a few percent."""
    t = config.train
    moves = int(np.clip(t.games // 4, 64, 20_000))
    return t.chunk_steps or max(1, moves // t.batch_size)


@dataclasses.dataclass(frozen=True)
class Learner:
    """Everything static about a training run, plus its jitted functions."""

    config: Config
    game: Game
    model: ValueModel
    spec: farl.LearnerSpec
    chunk: Callable[[farl.Carry], tuple[farl.Carry, farl.Metrics]]

    def init(self, key: jax.Array) -> farl.Carry:
        return farl.init_carry(self.game, self.model, self.spec, key)

    def policy(self, params: Any):
        """The greedy agent for these parameters (a batched ParamPolicy)."""
        return farl.greedy_policy(self.game, self.model, self.spec, params)

    def evaluate(self, params: Any, key: jax.Array) -> evaluation.ArenaResult:
        """The configured evaluation (opponent, games per seat, seats, openings)."""
        ev = self.config.eval
        openings = evaluation.opening_moves(self.game, ev.openings) if ev.openings else None
        return evaluation.arena(
            self.game,
            self.policy(params),
            make_opponent(ev.opponent, self.game),
            ev.games,
            key,
            seats=ev.seats,
            openings=openings,
        )


def make_learner(config: Config) -> Learner:
    game = build_game(config)
    model = build_model(config, game)
    spec = build_spec(config)
    chunk = farl.make_chunk(game, model, spec, chunk_steps(config))
    return Learner(config, game, model, spec, chunk)


@dataclasses.dataclass
class TrainResult:
    """What `train` returns: final carry (params inside), evaluation history, timings."""

    learner: Learner
    carry: farl.Carry
    history: list[dict]
    wall_time: float
    compile_time: float

    @property
    def params(self) -> Any:
        return self.carry.params


def train(
    config: Config,
    progress: bool = True,
    on_eval: Callable[[dict], None] | None = None,
    carry: farl.Carry | None = None,
) -> TrainResult:
    """Trains until `config.train.games` games have finished, evaluating every `eval.every`.

    Args:
        config: the experiment.
        progress: show a progress bar (tqdm) with games/s, epsilon, alpha, last evaluation.
        on_eval: called with each evaluation record (games, moves, wall time, results).
        carry: resume from this carry instead of a fresh start.
    """
    from tqdm.auto import tqdm

    learner = make_learner(config)
    total, every = config.train.games, config.eval.every
    key = jax.random.key(config.train.seed)
    run_key, eval_key = jax.random.split(key)
    if carry is None:
        carry = learner.init(run_key)
    history: list[dict] = []
    start = time.perf_counter()
    compile_start = time.perf_counter()
    chunk = learner.chunk.lower(carry).compile()
    compile_time = time.perf_counter() - compile_start
    train_time = 0.0
    next_eval = every if every else total

    def record(games: int, moves: int) -> dict:
        result = learner.evaluate(carry.params, jax.random.fold_in(eval_key, games))
        entry = {
            "train_games": games,
            "train_moves": moves,
            "train_seconds": round(train_time, 3),
            **result.to_dict(),
        }
        history.append(entry)
        if on_eval:
            on_eval(entry)
        return entry

    bar = tqdm(total=total, unit="game", disable=not progress, dynamic_ncols=True)
    games = int(carry.games)
    bar.update(min(games, total))
    last = ""
    while games < total:
        tick = time.perf_counter()
        carry, _ = chunk(carry)
        games = int(carry.games)
        train_time += time.perf_counter() - tick
        bar.update(min(games, total) - bar.n)
        bar.set_postfix_str(
            f"{games / max(train_time, 1e-9):,.0f} games/s, "
            f"eps {float(learner.spec.epsilon(games)):.3f}, "
            f"alpha {float(learner.spec.alpha(games)):.3g}{last}",
            refresh=False,
        )
        if games >= next_eval and games < total:
            entry = record(games, int(carry.moves))
            last = f", eval {entry['score']:+.3f}"
            next_eval += every
    bar.close()
    record(games, int(carry.moves))
    return TrainResult(learner, carry, history, time.perf_counter() - start, compile_time)
