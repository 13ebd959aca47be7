"""The training loop: chunks of lockstep play on the device, host events between them.

`train(config)` builds the learner (`jaxgames.builders`), starts or resumes its carry, and
iterates over jitted chunks; between chunks, and only there, it samples the parameter average,
writes metrics records, evaluates, saves checkpoints and updates the progress bar
(`jaxgames.runlog` has the loggers and the schedules of these events).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import pathlib
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import checkpoint, evaluation, runlog
from jaxgames.builders import Learner, make_learner
from jaxgames.config import Config
from jaxgames.errors import TrainingError
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
    already_complete: bool = False  # resumed a run that had played its games: nothing done

    @property
    def params(self) -> Params:
        """The latest parameters (those that training goes on with)."""
        return self.carry.params

    @property
    def agent_params(self) -> Params:
        """The parameters the agent plays with: the average when there is one."""
        return self.params if self.average is None else self.average


MAX_MOVES = 2**31 - 2**27  # stop before the int32 move counter could wrap in the next chunk


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
    saved_step: int | None = None  # the game count of the checkpoint on disk that it equals


def _start(
    learner: Learner, run_dir: pathlib.Path | None, resume: bool, new_schedule: bool, key: PRNGKey
) -> _Run:
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
        if (run_dir / "metrics.jsonl").exists():
            raise checkpoint.CheckpointError(
                f"{run_dir} holds the records of an earlier run (metrics.jsonl) but no "
                "checkpoint to continue; choose another --run-dir, or remove that folder"
            )
        return run
    saved, saved_meta, _, step = checkpoint.read_meta(run_dir)
    checkpoint.check_compatible(config, saved, saved_meta)
    if not new_schedule:
        _check_schedules(saved, config, step)  # read_meta checked that games == step
    run.carry, meta = checkpoint.restore(run_dir, run.carry)
    run.saved_step = int(run.carry.games)
    run.train_time = run.resumed_seconds = float(meta.get("train_seconds", 0.0))
    if config.train.average_from is not None:  # else a saved mean is not read
        saved_average = checkpoint.restore_average(run_dir, run.carry.params)
        if saved_average is not None:
            run.average, run.average_count = saved_average
    return run


def _check_schedules(saved: Config, config: Config, games: int) -> None:
    """Refuses a resume that would change alpha's or epsilon's course from game `games` on
    (a longer train.games stretches schedules that span the run), saying what changes."""
    old, new = (
        saved.algorithm.resolve(saved.train.games),
        config.algorithm.resolve(config.train.games),
    )
    end = max(saved.train.games, config.train.games, games + 1)
    points = np.linspace(games, end, 65)
    changes = []
    for name in ("alpha", "epsilon"):
        before, after = getattr(old, name), getattr(new, name)
        a, b = (np.asarray([float(f(g)) for g in points]) for f in (before, after))
        if not np.allclose(a, b, rtol=1e-6, atol=1e-9):
            i = int(np.argmax(np.abs(a - b)))
            changes.append(
                f"{name} at game {int(points[i]):,} would be {b[i]:.4g} instead of {a[i]:.4g} "
                f"({before} -> {after})"
            )
    if changes:
        why = (
            f"train.games {saved.train.games:,} -> {config.train.games:,} stretches the "
            "schedules that span the run"
            if saved.train.games != config.train.games
            else "the schedule settings differ"
        )
        raise checkpoint.CheckpointError(
            f"resuming at game {games:,} changes the schedules ({why}): {'; '.join(changes)}. "
            "Pass --new-schedule to continue so on purpose, or give the schedule's length "
            "(e.g. --algorithm.epsilon.games) to keep it"
        )


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


@dataclasses.dataclass(frozen=True)
class _Snapshot:
    """What one evaluation needs of the run at its game count."""

    params: Params
    games: int
    moves: int
    train_seconds: float
    average_count: int


def _snapshot(run: _Run, copy: bool) -> _Snapshot:
    """The agent's parameters (the average when there is one) and the run's counters; with
    `copy`, the parameters are copied, so that the next chunk may reuse (donate) the run's."""
    games = int(run.carry.games)
    checkpoint.check_finite(run.carry.params, f"after {games:,} games")
    params = run.carry.params if run.average is None else run.average
    if copy:
        params = jax.block_until_ready(jax.tree.map(lambda x: jnp.array(x, copy=True), params))
    return _Snapshot(params, games, int(run.carry.moves), run.train_time, run.average_count)


def _eval_entry(learner: Learner, snap: _Snapshot, key: PRNGKey) -> dict:
    """The evaluation record of a snapshot."""
    result = evaluate(learner, snap.params, key)
    return {
        "kind": "eval",
        "train_games": snap.games,
        "train_moves": snap.moves,
        "train_seconds": round(snap.train_seconds, 3),
        "opponent": learner.config.eval.opponent,
        "average_count": snap.average_count,  # 0: the latest parameters played
        **result.to_dict(),
    }


class _Evaluations:
    """Records evaluations: at once in the foreground, or (`eval.background`) on one host
    thread, collected in order as they finish."""

    def __init__(self, learner: Learner, run: _Run, log: runlog.Loggers, on_eval, background):
        self.learner, self.run, self.log, self.on_eval = learner, run, log, on_eval
        self.pool = (
            concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="jaxgames-eval")
            if background
            else None
        )
        self.pending: list[concurrent.futures.Future] = []

    def _record(self, entry: dict) -> dict:
        self.run.history.append(entry)
        self.log.write(entry)
        if self.on_eval:
            self.on_eval(entry)
        return entry

    def now(self, key: PRNGKey) -> dict:
        """Evaluates the run as it is and records it (after any still running)."""
        self.wait()
        return self._record(_eval_entry(self.learner, _snapshot(self.run, False), key))

    def start(self, key: PRNGKey) -> dict | None:
        """Evaluates the run as it is: in the foreground (returns the record) or on the
        thread (returns None; `finished` collects it)."""
        if self.pool is None:
            return self.now(key)
        snap = _snapshot(self.run, True)
        self.pending.append(self.pool.submit(_eval_entry, self.learner, snap, key))
        return None

    def finished(self, block: bool = False) -> list[dict]:
        """The records of the background evaluations that are done (with `block`: of all of
        them, waiting for those still running), in order."""
        out = []
        while self.pending and (block or self.pending[0].done()):
            out.append(self._record(self.pending.pop(0).result()))
        return out

    def wait(self) -> list[dict]:
        """Waits for the background evaluations and records them."""
        return self.finished(block=True)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _save(run_dir: pathlib.Path | None, run: _Run, config: Config) -> None:
    """A checkpoint of the run (with its average), if it has a folder and the run moved on
    since its last one; never of parameters that hold NaN or infinities (the run stops
    instead, its last checkpoint intact)."""
    games = int(run.carry.games)
    if run_dir is not None and games != run.saved_step:
        for params, what in ((run.carry.params, "parameters"), (run.average, "average")):
            if params is not None and not _finite(params):
                raise TrainingError(
                    f"the {what} became NaN or infinite by {games:,} games: the run diverged "
                    f"(lower algorithm.alpha, now {config.algorithm.alpha}); not saving it, "
                    "so the last checkpoint (if any) is from before the divergence"
                )
        meta = {"train_seconds": round(run.train_time, 3), "average_count": run.average_count}
        keep = config.train.keep_checkpoints
        checkpoint.save(run_dir, run.carry, config, meta, keep=keep, average=run.average)
        run.saved_step = games


def _check_memory(learner: Learner, compiled: Any) -> None:
    """Refuses a run whose training step (its carry and XLA's temporaries, from the compiled
    program) would not fit the device's memory, or, on a CPU, 80% of the machine's; before
    anything is allocated."""
    stats = compiled.memory_analysis()
    if stats is None:
        return
    need = (
        stats.argument_size_in_bytes
        + stats.output_size_in_bytes
        - stats.alias_size_in_bytes
        + stats.temp_size_in_bytes
    )
    device = jax.devices()[0]
    limit = (device.memory_stats() or {}).get("bytes_limit") if device.platform != "cpu" else None
    have = limit or 0.8 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if need > have:
        raise TrainingError(
            f"train.batch_size={learner.config.train.batch_size:,} needs {need / 1e9:,.1f} GB "
            f"for the training step (games in progress, histories, parameters, XLA's "
            f"temporaries); {have / 1e9:,.1f} GB are available: use a smaller batch"
        )


def _finite(params: Params) -> bool:
    return all(bool(np.isfinite(np.asarray(x)).all()) for x in jax.tree.leaves(params))


def train(
    config: Config,
    run_dir: str | pathlib.Path | None = None,
    progress: bool = True,
    on_eval: Callable[[dict], None] | None = None,
    resume: bool = False,
    new_schedule: bool = False,
) -> TrainResult:
    """Trains until `config.train.games` games have finished, evaluating every `eval.every`.

    Args:
        config: the experiment.
        run_dir: a run folder for the resolved config, metrics (JSON lines), checkpoints
            (every `train.checkpoint_every` games and at the end) and the learning curve.
        progress: show a progress bar (games/s, epsilon, alpha, last evaluation).
        on_eval: called with each evaluation record.
        resume: continue from the newest checkpoint in `run_dir` (the config may change
            budget, evaluation and schedules, not the game, approximator or batch size). A
            resume that would change alpha's or epsilon's course (a longer train.games
            stretches schedules that span the run) is refused unless `new_schedule`. A run
            that has played its games returns at once (`already_complete`).

    Ctrl-C stops after the current chunk, saves a checkpoint (with `run_dir`) and returns with
    `interrupted=True`; a second Ctrl-C aborts at once.

    Raises:
        TrainingError: the TD errors or the parameters became NaN or infinite (the run
            diverged; nothing non-finite is saved).
        CheckpointError: resuming from a missing or incompatible checkpoint, or a failed save.
        RunInUse: another process is training into `run_dir`.
    """
    if run_dir is None:
        return _train(config, None, progress, on_eval, resume, new_schedule)
    run_dir = pathlib.Path(run_dir)
    try:
        str(run_dir).encode("utf-8")
    except UnicodeEncodeError:
        raise checkpoint.CheckpointError(
            f"the run folder {str(run_dir)!r} is not valid UTF-8; checkpoints need a name "
            "in UTF-8 (choose another --run-dir)"
        ) from None
    with runlog.exclusive(run_dir):  # one training per run folder
        return _train(config, run_dir, progress, on_eval, resume, new_schedule)


def _train(
    config: Config,
    run_dir: pathlib.Path | None,
    progress: bool,
    on_eval: Callable[[dict], None] | None,
    resume: bool,
    new_schedule: bool,
) -> TrainResult:
    if progress:
        from tqdm.auto import tqdm
    else:  # tqdm.auto warns in a notebook without ipywidgets, even for a disabled bar
        from tqdm import tqdm

    learner = make_learner(config)
    run_key, eval_key = jax.random.split(jax.random.key(config.train.seed))
    t, total = config.train, config.train.games
    # Ctrl-C from here on only asks to stop (a KeyboardInterrupt inside XLA's compiler crashes)
    with _StopFlag() as stop:
        if progress:
            print("compiling the training step (seconds to a minute) ...", file=sys.stderr)
        tick = time.perf_counter()  # compiled from shapes: the memory is known before use
        chunk = learner.chunk.lower(jax.eval_shape(learner.init, run_key)).compile()
        compile_time = time.perf_counter() - tick
        _check_memory(learner, chunk)
        run = _start(learner, run_dir, resume, new_schedule, run_key)
        if int(run.carry.games) >= total:  # a resumed run that is complete: nothing to do
            return TrainResult(
                learner,
                run.carry,
                [],
                0.0,
                compile_time,
                already_complete=True,
                average=run.average,
                average_count=run.average_count,
            )
        if run_dir is not None and resume:
            runlog.drop_records_after(run_dir / "metrics.jsonl", int(run.carry.games))
        log = runlog.open_run(run_dir, config) if run_dir is not None else runlog.Loggers()

        evals = _Evaluations(learner, run, log, on_eval, config.eval.background)
        eval_key_now = lambda: jax.random.fold_in(eval_key, int(run.carry.games))

        start = time.perf_counter()
        window = _window(run)
        bar = tqdm(
            total=total,
            unit="game",
            disable=not progress,
            dynamic_ncols=True,
            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}{postfix}]",
        )
        bar.update(min(int(run.carry.games), total))
        last_eval, interrupted = "", stop.requested
        try:
            while not interrupted and (before := int(run.carry.games)) < total:
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
                if int(run.carry.moves) > MAX_MOVES:
                    _save(run_dir, run, config)
                    raise TrainingError(
                        f"the run has played {int(run.carry.moves):,} moves, as many as its "
                        "32-bit move counter holds; it stopped (checkpoint saved): split it into "
                        "runs of fewer games"
                    )
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
                done = evals.finished()
                if runlog.crossed(before, games, config.eval.every) and games < total:
                    done += [e for e in [evals.start(eval_key_now())] if e is not None]
                if done:
                    last_eval = f", eval {done[-1]['score']:+.3f}"
                if runlog.crossed(before, games, t.checkpoint_every):
                    _save(run_dir, run, config)
                interrupted = stop.requested
            evals.wait()  # before the end: the records of the background evaluations
        finally:
            bar.close()
            evals.close()
        _save(run_dir, run, config)
        if not interrupted:
            evals.now(eval_key_now())
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
