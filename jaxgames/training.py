"""From a Config to a trained agent: builders, the jitted chunk, and the host loop.

`make_learner(config)` builds everything static (game, approximator, learner settings) and
returns a `Learner` with `init(key)` and a jitted, carry-donating `chunk(carry)` that advances all
B games `chunk_steps` lockstep moves. `train(config)` is the host loop: it only iterates over
chunks, and between them reports progress, evaluates and hands the carry to callbacks.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import pathlib
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames import evaluation
from jaxgames.approximators import (
    ValueModel,
    cnn,
    cnn_model,
    linear,
    linear_model,
    ntuple,
    ntuple_model,
    tabular,
)
from jaxgames.config import Config, to_dict
from jaxgames.core import Game
from jaxgames.learning import farl, minimax_q
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
    """The approximator of `config` bound to `game`: a value head over afterstates for TD, a
    Q head (one output per action) otherwise; one parameter set per player, except for
    minimax_q's single Q function."""
    ap = config.approximator
    outputs = 1 if config.algorithm.kind == "td" else game.num_actions
    players = 1 if config.algorithm.kind == "minimax_q" else game.num_players
    if ap.kind == "linear":
        net = linear.LinearNet(
            players, outputs, linear.num_features(game, ap.features), ap.output, ap.combine
        )
        return linear_model(game, net, ap.features)
    if ap.kind == "cnn":
        planes = jax.eval_shape(game.observe, game.init(jax.random.key(0)), 0).shape
        net = cnn.make_cnn(
            planes, players, outputs, ap.channels, ap.hidden, ap.optimizer, ap.output
        )
        return cnn_model(game, net)
    if game.board_spec is None:
        raise ValueError(f"{game!r} has no board description for table-based approximators")
    if ap.kind == "tabular":
        net = tabular.make_tabular(game.board_spec, players, outputs, ap.symmetries, ap.output)
    else:
        net = ntuple.make_ntuple(
            game.board_spec,
            build_tuples(config, game),
            players,
            outputs,
            symmetries=ap.symmetries,
            output=ap.output,
            tcl=ap.tcl,
            tcl_beta=ap.tcl_beta,
            tcl_init=ap.tcl_init,
        )
    return ntuple_model(game, net, ap.combine)


def build_spec(config: Config) -> farl.LearnerSpec | minimax_q.MinimaxQSpec:
    a, t = config.algorithm, config.train
    if a.kind == "minimax_q":
        return minimax_q.MinimaxQSpec(
            gamma=a.gamma,
            replay_size=a.replay_size,
            replay_batch=a.replay_batch,
            target_every=a.target_every,
            random_opening_moves=a.random_opening_moves,
            alpha=a.alpha.resolve(t.games),
            epsilon=a.epsilon.resolve(t.games),
            batch_size=t.batch_size,
        )
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
        reward_scale=a.reward_scale,
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
    spec: farl.LearnerSpec | minimax_q.MinimaxQSpec
    chunk: Callable[[Any], tuple[Any, farl.Metrics]]

    @property
    def algorithm(self):
        """The learning module: `farl` (td, sarsa, q) or `minimax_q`."""
        return minimax_q if self.spec.kind == "minimax_q" else farl

    def init(self, key: jax.Array) -> Any:
        """A fresh training carry (`farl.Carry` or `minimax_q.Carry`)."""
        return self.algorithm.init_carry(self.game, self.model, self.spec, key)

    def policy(self, params: Any):
        """The greedy agent for these parameters (a batched ParamPolicy)."""
        return self.algorithm.greedy_policy(self.game, self.model, self.spec, params)

    def greedy_action(self, params: Any, state, key: jax.Array) -> jax.Array:
        """The greedy move for one state (unbatched, jittable)."""
        return self.algorithm.greedy_action(self.game, self.model, self.spec, params, state, key)

    def move_scores(self, params: Any, state) -> jax.Array:
        """float32[A]: what the greedy mover maximises for each action of one state
        (unbatched): r + gamma * V(afterstate) for TD, Q(s, a) for SARSA/Q, +-Q for
        minimax_q (the second player minimises Q)."""
        features = self.model.features(state)
        return self.algorithm.action_scores(
            self.game, self.model, self.spec, params, state, features
        )[0]

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
    algorithm = minimax_q if spec.kind == "minimax_q" else farl
    chunk = algorithm.make_chunk(game, model, spec, chunk_steps(config))
    return Learner(config, game, model, spec, chunk)


@dataclasses.dataclass
class TrainResult:
    """What `train` returns: final carry (params inside), evaluation history, timings, and
    the averaged parameters (train.average_from; None without)."""

    learner: Learner
    carry: farl.Carry
    history: list[dict]
    wall_time: float
    compile_time: float
    interrupted: bool = False
    average: Any = None
    average_count: int = 0

    @property
    def params(self) -> Any:
        """The latest parameters (those that training goes on with)."""
        return self.carry.params

    @property
    def agent_params(self) -> Any:
        """The parameters the agent plays with: the average when there is one."""
        return self.params if self.average is None else self.average


def _average_every(config: Config) -> int:
    t = config.train
    return t.average_every or max(1, (t.games - t.average_from) // 100)


def _next_sample(config: Config, games: int) -> int:
    """The first game count after `games` at which the mean takes a sample (the samples are
    at average_from + k * average_every, taken at the first chunk end at or past each)."""
    start, every = config.train.average_from, _average_every(config)
    return start if games < start else start + ((games - start) // every + 1) * every


@functools.partial(jax.jit, donate_argnums=0)
def _accumulate(average: Any, params: Any, count: jax.Array) -> Any:
    """The running mean with one more sample (`count` samples in all); leaves that are not
    floating point (step counters) take the latest value."""

    def one(a, p):
        if not jnp.issubdtype(p.dtype, jnp.inexact):
            return p
        return a + (p - a) / count.astype(a.dtype)

    return jax.tree.map(one, average, params)


class TrainingError(RuntimeError):
    """Training cannot go on (e.g. the values diverged)."""


class _StopFlag:
    """SIGINT (Ctrl-C) asks the loop to stop after the current chunk; a second one aborts."""

    def __init__(self):
        self.requested = False
        self._previous = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
        return False


def _tensorboard_writer(folder: pathlib.Path):
    try:
        from tensorboardX import SummaryWriter
    except ImportError:
        raise ValueError(
            'train.tensorboard needs tensorboardX: pip install "jaxgames[tensorboard]"'
        ) from None
    return SummaryWriter(str(folder))


def _log_every(config: Config) -> int:
    return config.train.log_every or max(1, config.train.games // 100)


def train(
    config: Config,
    run_dir: str | pathlib.Path | None = None,
    progress: bool = True,
    on_eval: Callable[[dict], None] | None = None,
    resume: bool = False,
) -> TrainResult:
    """Trains until `config.train.games` games have finished, evaluating every `eval.every`.

    Args:
        config: the experiment.
        run_dir: a run folder for the resolved config, metrics (JSON lines), checkpoints
            (every `train.checkpoint_every` games and at the end) and the learning curve.
        progress: show a progress bar (games/s, epsilon, alpha, last evaluation).
        on_eval: called with each evaluation record.
        resume: continue from the newest checkpoint in `run_dir` (the config may change
            schedules, budget and evaluation, not the game, approximator or batch size).

    Ctrl-C stops after the current chunk, saves a checkpoint (with `run_dir`) and returns with
    `interrupted=True`; a second Ctrl-C aborts at once.

    Raises:
        TrainingError: the TD errors became NaN or infinite (the run diverged).
        CheckpointError: resuming from a missing or incompatible checkpoint, or a failed save.
    """
    from tqdm.auto import tqdm

    from jaxgames import checkpoint

    learner = make_learner(config)
    total, every = config.train.games, config.eval.every
    run_key, eval_key = jax.random.split(jax.random.key(config.train.seed))
    carry = learner.init(run_key)
    history: list[dict] = []
    average, average_count = None, 0
    elapsed0 = 0.0
    metrics_file = tensorboard = None
    if run_dir is not None:
        run_dir = pathlib.Path(run_dir)
        if resume:
            saved, meta, _, _ = checkpoint.read_meta(run_dir)
            checkpoint.check_compatible(config, saved)
            carry, meta = checkpoint.restore(run_dir, carry)
            elapsed0 = float(meta.get("train_seconds", 0.0))
            if config.train.average_from is not None:  # else a saved mean is not read
                saved_average = checkpoint.restore_average(run_dir, carry.params)
                if saved_average is not None:
                    average, average_count = saved_average
        elif checkpoint.latest_step(run_dir) is not None:
            raise checkpoint.CheckpointError(
                f"{run_dir} already holds a run; pass --resume to continue it, or choose "
                "another --run-dir"
            )
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.json").write_text(json.dumps(to_dict(config), indent=2) + "\n")
        metrics_file = (run_dir / "metrics.jsonl").open("a")
        if config.train.tensorboard:
            tensorboard = _tensorboard_writer(run_dir / "tensorboard")
    compile_start = time.perf_counter()
    chunk = learner.chunk.lower(carry).compile()
    compile_time = time.perf_counter() - compile_start
    train_time = elapsed0
    games = int(carry.games)
    next_eval = (games // every + 1) * every if every else total
    next_log = (games // _log_every(config) + 1) * _log_every(config)
    ckpt_every = config.train.checkpoint_every
    next_ckpt = (games // ckpt_every + 1) * ckpt_every if ckpt_every else None
    averaging = config.train.average_from is not None
    next_average = _next_sample(config, games) if averaging else None

    def new_window() -> dict:
        """Totals since the last metrics record."""
        return {
            "games": games,
            "moves": int(carry.moves),
            "time": train_time,
            "delta": 0.0,
            "updates": 0,
        }

    window = new_window()

    def write(record: dict) -> None:
        if metrics_file is not None:
            metrics_file.write(json.dumps(record) + "\n")
            metrics_file.flush()
        if tensorboard is not None:
            for name, value in record.items():
                if isinstance(value, int | float) and name != "train_games":
                    tensorboard.add_scalar(f"{record['kind']}/{name}", value, record["train_games"])
            tensorboard.flush()

    def evaluate(games: int) -> dict:
        checkpoint.check_finite(carry.params, f"after {games:,} games")
        agent_params = carry.params if average is None else average
        result = learner.evaluate(agent_params, jax.random.fold_in(eval_key, games))
        entry = {
            "kind": "eval",
            "train_games": games,
            "train_moves": int(carry.moves),
            "train_seconds": round(train_time, 3),
            "opponent": config.eval.opponent,
            "average_count": average_count,  # 0: the latest parameters played
            **result.to_dict(),
        }
        history.append(entry)
        write(entry)
        if on_eval:
            on_eval(entry)
        return entry

    def save() -> None:
        if run_dir is not None:
            checkpoint.save(
                run_dir,
                carry,
                config,
                {"train_seconds": round(train_time, 3), "average_count": average_count},
                keep=config.train.keep_checkpoints,
                average=average,
            )

    start = time.perf_counter()
    bar = tqdm(total=total, unit="game", disable=not progress, dynamic_ncols=True)
    bar.update(min(games, total))
    last_eval = ""
    interrupted = False
    try:
        with _StopFlag() as stop:
            while games < total:
                tick = time.perf_counter()
                carry, metrics = chunk(carry)
                games = int(carry.games)
                if averaging and games >= next_average:
                    average_count += 1
                    average = _accumulate(
                        jax.tree.map(jnp.copy, carry.params) if average is None else average,
                        carry.params,
                        jnp.float32(average_count),
                    )
                    next_average = _next_sample(config, games)
                train_time += time.perf_counter() - tick
                window["delta"] += float(metrics.abs_delta_sum)
                window["updates"] += int(metrics.updates)
                if not np.isfinite(window["delta"]):
                    raise TrainingError(
                        f"the TD errors became NaN or infinite after {games:,} games: the run "
                        f"diverged; lower algorithm.alpha (now {config.algorithm.alpha}). "
                        "The last checkpoint (if any) is from before the divergence."
                    )
                epsilon = float(learner.spec.epsilon(games))
                alpha = float(learner.spec.alpha(games))
                bar.update(min(games, total) - bar.n)
                bar.set_postfix_str(
                    f"{(games - window['games']) / max(train_time - window['time'], 1e-9):,.0f}"
                    f" games/s, eps {epsilon:.3f}, alpha {alpha:.3g}{last_eval}",
                    refresh=False,
                )
                if games >= next_log:
                    seconds = train_time - window["time"]
                    write(
                        {
                            "kind": "train",
                            "train_games": games,
                            "train_moves": int(carry.moves),
                            "train_seconds": round(train_time, 3),
                            "games_per_s": round((games - window["games"]) / max(seconds, 1e-9), 1),
                            "moves_per_s": round(
                                (int(carry.moves) - window["moves"]) / max(seconds, 1e-9), 1
                            ),
                            "epsilon": epsilon,
                            "alpha": alpha,
                            "mean_abs_delta": window["delta"] / max(window["updates"], 1),
                        }
                    )
                    window = new_window()
                    next_log += _log_every(config)
                if games >= next_eval and games < total:
                    last_eval = f", eval {evaluate(games)['score']:+.3f}"
                    next_eval += every
                if next_ckpt is not None and games >= next_ckpt:
                    save()
                    next_ckpt += ckpt_every
                if stop.requested:
                    interrupted = True
                    break
    finally:
        bar.close()
    save()
    if not interrupted:
        evaluate(games)
        if run_dir is not None and history:
            from jaxgames import plots

            plots.learning_curve(run_dir / "metrics.jsonl", run_dir / "curve.png")
    if metrics_file is not None:
        metrics_file.close()
    if tensorboard is not None:
        tensorboard.close()
    return TrainResult(
        learner,
        carry,
        history,
        time.perf_counter() - start + elapsed0,
        compile_time,
        interrupted,
        average,
        average_count,
    )
