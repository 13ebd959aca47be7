"""The training loop: chunks of lockstep play on the device, host events between them.

`train(config)` builds the learner (`jaxgames.builders`), starts or resumes its carry, and
iterates over jitted chunks; between chunks, and only there, it samples the parameter average,
writes metrics records, evaluates, saves checkpoints and updates the progress bar
(`jaxgames.runlog` has the loggers and the schedules of these events).
"""

from __future__ import annotations

import dataclasses
import pathlib
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from jaxgames import checkpoint, evaluation, runlog
from jaxgames.builders import Learner, make_learner
from jaxgames.config import Config
from jaxgames.opponents import make_opponent
from jaxgames.types import Carry, Params, PRNGKey


@dataclasses.dataclass
class TrainResult:
    """What `train` returns: final carry (params inside), evaluation history, timings, and
    the averaged parameters (train.average_from; None without)."""

    learner: Learner
    carry: Carry
    history: list[dict]
    wall_time: float
    compile_time: float
    interrupted: bool = False
    average: Any = None
    average_count: int = 0

    @property
    def params(self) -> Params:
        """The latest parameters (those that training goes on with)."""
        return self.carry.params

    @property
    def agent_params(self) -> Params:
        """The parameters the agent plays with: the average when there is one."""
        return self.params if self.average is None else self.average


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


def evaluate(learner: Learner, params: Params, key: PRNGKey) -> evaluation.ArenaResult:
    """The configured evaluation of these parameters (opponent, games per seat, seats,
    openings)."""
    ev = learner.config.eval
    openings = evaluation.opening_moves(learner.game, ev.openings) if ev.openings else None
    return evaluation.arena(
        learner.game,
        learner.policy(params),
        make_opponent(ev.opponent, learner.game),
        ev.games,
        key,
        seats=ev.seats,
        openings=openings,
    )


@dataclasses.dataclass
class _Run:
    """The host-side state of a run between chunks."""

    carry: Carry
    average: Any = None
    average_count: int = 0
    train_time: float = 0.0
    resumed_seconds: float = 0.0  # training time of the run before this session
    history: list[dict] = dataclasses.field(default_factory=list)


def _start(learner: Learner, run_dir: pathlib.Path | None, resume: bool, key: PRNGKey) -> _Run:
    """A fresh run, or the newest checkpoint of `run_dir` continued (`resume`)."""
    config = learner.config
    run = _Run(learner.init(key))
    if run_dir is None:
        return run
    if not resume:
        if checkpoint.latest_step(run_dir) is not None:
            raise checkpoint.CheckpointError(
                f"{run_dir} already holds a run; pass --resume to continue it, or choose "
                "another --run-dir"
            )
        return run
    saved, saved_meta, _, _ = checkpoint.read_meta(run_dir)
    checkpoint.check_compatible(config, saved, saved_meta)
    run.carry, meta = checkpoint.restore(run_dir, run.carry)
    run.train_time = run.resumed_seconds = float(meta.get("train_seconds", 0.0))
    if config.train.average_from is not None:  # else a saved mean is not read
        saved_average = checkpoint.restore_average(run_dir, run.carry.params)
        if saved_average is not None:
            run.average, run.average_count = saved_average
    return run


def _train_record(config: Config, run: _Run, window: dict, learner: Learner) -> dict:
    """The metrics record of the training window that ends now."""
    games, moves = int(run.carry.games), int(run.carry.moves)
    seconds = max(run.train_time - window["time"], 1e-9)
    return {
        "kind": "train",
        "train_games": games,
        "train_moves": moves,
        "train_seconds": round(run.train_time, 3),
        "games_per_s": round((games - window["games"]) / seconds, 1),
        "moves_per_s": round((moves - window["moves"]) / seconds, 1),
        "epsilon": float(learner.settings.epsilon(games)),
        "alpha": float(learner.settings.alpha(games)),
        "mean_abs_delta": window["delta"] / max(window["updates"], 1),
    }


def _window(run: _Run) -> dict:
    """Totals since the last metrics record."""
    games, moves = int(run.carry.games), int(run.carry.moves)
    return {"games": games, "moves": moves, "time": run.train_time, "delta": 0.0, "updates": 0}


def _evaluate(learner: Learner, run: _Run, log: runlog.Loggers, key: PRNGKey, on_eval) -> dict:
    """Evaluates the agent (the average when there is one) and records the result."""
    games = int(run.carry.games)
    checkpoint.check_finite(run.carry.params, f"after {games:,} games")
    params = run.carry.params if run.average is None else run.average
    result = evaluate(learner, params, key)
    entry = {
        "kind": "eval",
        "train_games": games,
        "train_moves": int(run.carry.moves),
        "train_seconds": round(run.train_time, 3),
        "opponent": learner.config.eval.opponent,
        "average_count": run.average_count,  # 0: the latest parameters played
        **result.to_dict(),
    }
    run.history.append(entry)
    log.write(entry)
    if on_eval:
        on_eval(entry)
    return entry


def _save(run_dir: pathlib.Path | None, run: _Run, config: Config) -> None:
    """A checkpoint of the run (with its average), if it has a folder."""
    if run_dir is not None:
        meta = {"train_seconds": round(run.train_time, 3), "average_count": run.average_count}
        keep = config.train.keep_checkpoints
        checkpoint.save(run_dir, run.carry, config, meta, keep=keep, average=run.average)


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

    learner = make_learner(config)
    run_key, eval_key = jax.random.split(jax.random.key(config.train.seed))
    run_dir = pathlib.Path(run_dir) if run_dir is not None else None
    run = _start(learner, run_dir, resume, run_key)
    log = runlog.open_run(run_dir, config) if run_dir is not None else runlog.Loggers()
    tick = time.perf_counter()
    chunk = learner.chunk.lower(run.carry).compile()
    compile_time = time.perf_counter() - tick
    t, total = config.train, config.train.games

    def evaluate_now() -> dict:
        return _evaluate(
            learner, run, log, jax.random.fold_in(eval_key, int(run.carry.games)), on_eval
        )

    start = time.perf_counter()
    window = _window(run)
    bar = tqdm(total=total, unit="game", disable=not progress, dynamic_ncols=True)
    bar.update(min(int(run.carry.games), total))
    last_eval, interrupted = "", False
    try:
        with _StopFlag() as stop:
            while (before := int(run.carry.games)) < total:
                tick = time.perf_counter()
                run.carry, metrics = chunk(run.carry)
                games = int(run.carry.games)
                if t.average_from is not None and runlog.crossed(
                    before, games, runlog.average_period(config), t.average_from
                ):
                    run.average_count += 1
                    run.average = runlog.accumulate(
                        run.average, run.carry.params, run.average_count
                    )
                run.train_time += time.perf_counter() - tick
                window["delta"] += float(metrics.abs_delta_sum)
                window["updates"] += int(metrics.updates)
                if not np.isfinite(window["delta"]):
                    raise TrainingError(
                        f"the TD errors became NaN or infinite after {games:,} games: the run "
                        f"diverged; lower algorithm.alpha (now {config.algorithm.alpha}). "
                        "The last checkpoint (if any) is from before the divergence."
                    )
                record = _train_record(config, run, window, learner)
                bar.update(min(games, total) - bar.n)
                bar.set_postfix_str(
                    f"{record['games_per_s']:,.0f} games/s, eps {record['epsilon']:.3f}, "
                    f"alpha {record['alpha']:.3g}{last_eval}",
                    refresh=False,
                )
                if runlog.crossed(before, games, runlog.log_period(config)):
                    log.write(record)
                    window = _window(run)
                if runlog.crossed(before, games, config.eval.every) and games < total:
                    last_eval = f", eval {evaluate_now()['score']:+.3f}"
                if runlog.crossed(before, games, t.checkpoint_every):
                    _save(run_dir, run, config)
                if stop.requested:
                    interrupted = True
                    break
    finally:
        bar.close()
    _save(run_dir, run, config)
    if not interrupted:
        evaluate_now()
        if run_dir is not None and run.history:
            from jaxgames import plots

            plots.learning_curve(run_dir / "metrics.jsonl", run_dir / "curve.png")
    log.close()
    return TrainResult(
        learner,
        run.carry,
        run.history,
        time.perf_counter() - start + run.resumed_seconds,
        compile_time,
        interrupted,
        run.average,
        run.average_count,
    )
