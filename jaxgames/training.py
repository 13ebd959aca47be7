"""The training loop: chunks of lockstep play on the device, host events between them.

`train(config)` builds the learner (`jaxgames.builders`), starts or resumes its carry, and
iterates over jitted chunks; between chunks, and only there, it samples the parameter average,
writes metrics records, evaluates, saves checkpoints and updates the progress bar
(`jaxgames.runlog` has the loggers and the schedules of these events).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import json
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

from jaxgames import checkpoint, evaluation, parallel, runlog
from jaxgames.builders import Learner, make_learner
from jaxgames.config import Config, to_dict
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
        devices=ev.devices,
    )


@dataclasses.dataclass
class _Run:
    """The host-side state of a run between chunks."""

    carry: Carry
    average: Any = None
    average_count: int = 0
    train_time: float = 0.0
    resumed_seconds: float = 0.0  # training time of the run before this session
    resumed_wall: float = 0.0  # wall time of the run before this session
    started: float = dataclasses.field(default_factory=time.perf_counter)

    def wall(self) -> float:
        """Seconds of wall time since the run began (earlier sessions included): compiling,
        training, evaluations and checkpoints, all that a user waits for."""
        return self.resumed_wall + time.perf_counter() - self.started

    history: list[dict] = dataclasses.field(default_factory=list)
    saved_step: int | None = None  # the game count of the checkpoint on disk that it equals


def _start(
    learner: Learner,
    config: Config,
    run_dir: pathlib.Path | None,
    resume: bool,
    new_schedule: bool,
    key: PRNGKey,
) -> _Run:
    """A fresh run of `config`, or the newest checkpoint of `run_dir` continued (`resume`)."""
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
    run.resumed_wall = float(meta.get("wall_seconds", run.train_time))
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
        "wall_seconds": round(run.wall(), 3),
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
    if len(jax.tree.leaves(params)[0].sharding.device_set) > 1:  # one replica plays
        params, copy = parallel.first_device(params), False
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
        # when its result is known: after the evaluation, and after those before it
        entry = {**entry, "wall_seconds": round(self.run.wall(), 3)}
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
        meta = {
            "train_seconds": round(run.train_time, 3),
            "wall_seconds": round(run.wall(), 3),
            "average_count": run.average_count,
        }
        keep = config.train.keep_checkpoints
        checkpoint.save(run_dir, run.carry, config, meta, keep=keep, average=run.average)
        run.saved_step = games


def _check_memory(learner: Learner, compiled: Any, copies: int = 1) -> None:
    """Refuses a run whose training step (its carry and XLA's temporaries, from the compiled
    program; `copies` carries of several seeds on one device, or on a CPU's memory) would not
    fit the device's memory, or, on a CPU, 80% of the machine's; before anything is
    allocated."""
    stats = compiled.memory_analysis()
    if stats is None:
        return
    need = (
        stats.argument_size_in_bytes + stats.output_size_in_bytes - stats.alias_size_in_bytes
    ) * copies + stats.temp_size_in_bytes
    device = jax.local_devices()[0]
    limit = (device.memory_stats() or {}).get("bytes_limit") if device.platform != "cpu" else None
    have = limit or 0.8 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if need > have:
        raise TrainingError(
            f"train.batch_size={learner.config.train.batch_size:,}"
            f"{f' with {copies} seeds' if copies > 1 else ''} needs {need / 1e9:,.1f} GB "
            f"for the training step (games in progress, histories, parameters, XLA's "
            f"temporaries); {have / 1e9:,.1f} GB are available: use a smaller batch"
            f"{' or fewer seeds' if copies > 1 else ''}"
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
        config: the experiment (one seed: `train.seeds` 1; for several, `train_seeds`).
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
        ValueError: `config.train.seeds` is more than 1.
    """
    if config.train.seeds != 1:
        raise ValueError(
            f"train.seeds={config.train.seeds}: train() trains one agent; train_seeds(config) "
            "trains several in one run (the CLI chooses it by itself)"
        )
    return _train_many(config, run_dir, progress, on_eval, resume, new_schedule)[0]


def train_seeds(
    config: Config,
    run_dir: str | pathlib.Path | None = None,
    progress: bool = True,
    on_eval: Callable[[dict], None] | None = None,
    resume: bool = False,
    new_schedule: bool = False,
) -> list[TrainResult]:
    """Trains `config.train.seeds` independent agents in one process, with the seeds
    `train.seed`, `train.seed + 1`, ...: one compiled step that every agent's chunk runs in
    turn, all of them dispatched before any is waited for, spread over `train.devices`
    devices (seed k on device k mod D; they run at once there); an agent that has played
    its games waits for the others. Each agent equals, bit for bit on the CPU, the one
    `train` gives with its seed (`train.seeds` 1), and keeps a run folder of its own,
    RUN/seed-S, with that config, its metrics, checkpoints and learning curve;
    RUN/config.json holds the whole run's. `jaxgames eval RUN` evaluates every agent and
    summarises them.

    Not vmapped over the seed: on XLA:CPU the n-tuple tables' gathers and scatters with a
    seed axis ran 20x slower than one seed's, and `lax.map` over stacked carries 2.7x
    (each seed's tables copied in and out of the stack); one chunk per agent is as fast as
    separate runs and shares their compilation (docs/benchmarks.md).

    The arguments are `train`'s (`on_eval` is called with each record, which names its
    `seed`); `resume` continues every agent from its own newest checkpoint. Returns one
    TrainResult per seed, in order.
    """
    return _train_many(config, run_dir, progress, on_eval, resume, new_schedule)


def _seed_configs(config: Config) -> list[Config]:
    t = config.train
    return [
        dataclasses.replace(config, train=dataclasses.replace(t, seed=t.seed + k, seeds=1))
        for k in range(t.seeds)
    ]


def _train_many(
    config: Config,
    run_dir: str | pathlib.Path | None,
    progress: bool,
    on_eval: Callable[[dict], None] | None,
    resume: bool,
    new_schedule: bool,
) -> list[TrainResult]:
    configs = _seed_configs(config)
    if run_dir is None:
        return _train(config, configs, None, progress, on_eval, resume, new_schedule)
    run_dir = pathlib.Path(run_dir)
    try:
        str(run_dir).encode("utf-8")
    except UnicodeEncodeError:
        raise checkpoint.CheckpointError(
            f"the run folder {str(run_dir)!r} is not valid UTF-8; checkpoints need a name "
            "in UTF-8 (choose another --run-dir)"
        ) from None
    if config.train.seeds == 1:
        dirs = [run_dir]
    else:
        dirs = [run_dir / f"seed-{c.train.seed}" for c in configs]
    # one training per run folder (held by process 0 of a multi-process run)
    lock = runlog.exclusive(run_dir) if jax.process_index() == 0 else contextlib.nullcontext()
    with lock:
        if config.train.seeds > 1:
            _check_seed_folders(run_dir, config, resume)
        return _train(config, configs, dirs, progress, on_eval, resume, new_schedule)


def _check_seed_folders(run_dir: pathlib.Path, config: Config, resume: bool) -> None:
    """A run of several seeds holds RUN/config.json; a new run needs a folder without one,
    and a resume must keep its seeds."""
    whole = run_dir / "config.json"
    if resume and whole.is_file():
        saved = json.loads(whole.read_text()).get("train", {})
        was = (saved.get("seed", 0), saved.get("seeds", 1))
        if was != (config.train.seed, config.train.seeds):
            raise checkpoint.CheckpointError(
                f"{run_dir} holds the seeds {was[0]} .. {was[0] + was[1] - 1}; resume it with "
                f"train.seed {was[0]} and train.seeds {was[1]}"
            )
    elif not resume and whole.is_file():
        raise checkpoint.CheckpointError(
            f"{run_dir} already holds a run; pass --resume to continue it, or choose another "
            "--run-dir"
        )


def seed_devices(seeds: int, devices: int) -> list:
    """The devices a run of `seeds` agents is spread over (`train.devices`; 0: every visible
    device): the most of them whose number divides `seeds`, so each holds as many seeds."""
    return parallel.divisor_devices(seeds, devices)


@dataclasses.dataclass
class _Seed:
    """One agent of a run: its config, folder, host state, loggers and evaluations."""

    config: Config
    run_dir: pathlib.Path | None
    run: _Run
    eval_key: PRNGKey
    log: Any = None
    evals: Any = None
    window: dict = dataclasses.field(default_factory=dict)
    record: dict = dataclasses.field(default_factory=dict)  # of the last chunk
    last_eval: str = ""

    def eval_key_now(self) -> PRNGKey:
        return jax.random.fold_in(self.eval_key, int(self.run.carry.games))

    def after_chunk(self, learner: Learner, before: int, metrics: Any, seconds: float) -> None:
        """The host events of one chunk: average, counters, records, evaluations,
        checkpoints."""
        config, run, t = self.config, self.run, self.config.train
        games = int(run.carry.games)
        if t.average_from is not None and runlog.crossed(
            before, games, runlog.average_period(config), t.average_from
        ):
            run.average_count += 1
            run.average = runlog.accumulate(run.average, run.carry.params, run.average_count)
        run.train_time += seconds
        if int(run.carry.moves) > MAX_MOVES:
            _save(self.run_dir, run, config)
            raise TrainingError(
                f"the run has played {int(run.carry.moves):,} moves, as many as its "
                "32-bit move counter holds; it stopped (checkpoint saved): split it into "
                "runs of fewer games"
            )
        self.window["delta"] += float(metrics.abs_delta_sum)
        self.window["updates"] += int(metrics.updates)
        if not np.isfinite(self.window["delta"]):
            raise TrainingError(
                f"the TD errors became NaN or infinite after {games:,} games: the run "
                f"diverged; lower algorithm.alpha (now {config.algorithm.alpha}). "
                "The last checkpoint (if any) is from before the divergence."
            )
        self.record = _train_record(config, run, self.window, learner)
        if runlog.crossed(before, games, runlog.log_period(config)):
            self.log.write(self.record)
            self.window = _window(run)
        done = self.evals.finished()
        if runlog.crossed(before, games, config.eval.every) and games < t.games:
            done += [e for e in [self.evals.start(self.eval_key_now())] if e is not None]
        if done:
            self.last_eval = f", eval {done[-1]['score']:+.3f}"
        if runlog.crossed(before, games, t.checkpoint_every):
            _save(self.run_dir, run, config)


def _train(
    config: Config,
    configs: list[Config],
    run_dirs: list[pathlib.Path] | None,
    progress: bool,
    on_eval: Callable[[dict], None] | None,
    resume: bool,
    new_schedule: bool,
) -> list[TrainResult]:
    if progress:
        from tqdm.auto import tqdm
    else:  # tqdm.auto warns in a notebook without ipywidgets, even for a disabled bar
        from tqdm import tqdm

    learner = make_learner(configs[0])
    keys = [jax.random.split(jax.random.key(c.train.seed)) for c in configs]
    n = len(configs)
    several = n > 1
    # several processes (jax.distributed) train one agent together; process 0 alone shows
    # progress, writes records, evaluations and plots; all of them write the checkpoints
    first_process = jax.process_index() == 0
    if jax.process_count() > 1 and several:
        raise TrainingError(
            f"train.seeds={n} over {jax.process_count()} processes: several seeds train on "
            "the devices of one machine; run one seed per multi-process run"
        )
    if not first_process:
        progress, on_eval = False, None
    total = config.train.games
    # Ctrl-C from here on only asks to stop (a KeyboardInterrupt inside XLA's compiler crashes)
    with _StopFlag() as stop:
        if progress:
            print("compiling the training step (seconds to a minute) ...", file=sys.stderr)
        tick = time.perf_counter()  # compiled from shapes: the memory is known before use
        shapes = jax.eval_shape(learner.init, keys[0][0])
        mesh = None  # one agent's games split over the devices (jaxgames.parallel)
        if several:
            devices = seed_devices(n, config.train.devices)
        else:
            devices = parallel.divisor_devices(config.train.batch_size, config.train.devices)
            if len(devices) > 1:
                mesh = parallel.MeshChunk(learner, shapes, devices)
                if progress:
                    b = config.train.batch_size
                    print(
                        f"the {b:,} games split over {len(devices)} {devices[0].platform} "
                        f"devices, {b // len(devices):,} each (train.devices)",
                        file=sys.stderr,
                    )
        chunk = (mesh or learner.chunk).lower(shapes).compile()
        compile_time = time.perf_counter() - tick
        on_cpu = devices[0].platform == "cpu"
        _check_memory(learner, chunk, n if on_cpu else max(1, n // len(devices)))
        dirs = run_dirs or [None] * len(configs)
        seeds = [
            _Seed(c, d, _start(learner, c, d, resume, new_schedule, k[0]), k[1])
            for c, d, k in zip(configs, dirs, keys, strict=True)
        ]
        for s in seeds:  # the wall clock runs from the compilation on
            s.run.started = tick
        if all(int(s.run.carry.games) >= total for s in seeds):  # resumed and complete
            return [
                TrainResult(
                    learner,
                    s.run.carry,
                    [],
                    0.0,
                    compile_time,
                    already_complete=True,
                    average=s.run.average,
                    average_count=s.run.average_count,
                )
                for s in seeds
            ]
        if jax.process_count() > 1:  # every process checked the folder before any writes
            from jax.experimental import multihost_utils

            multihost_utils.sync_global_devices("jaxgames: the run started")
        if several and run_dirs:  # every agent started: RUN/config.json, the whole run's
            run_dirs[0].parent.mkdir(parents=True, exist_ok=True)
            whole = json.dumps(to_dict(config), indent=2) + "\n"
            (run_dirs[0].parent / "config.json").write_text(whole)
        for s in seeds:
            if s.run_dir is not None and resume and first_process:
                runlog.drop_records_after(s.run_dir / "metrics.jsonl", int(s.run.carry.games))
            writes = s.run_dir is not None and first_process
            s.log = runlog.open_run(s.run_dir, s.config) if writes else runlog.Loggers()
            tagged = on_eval
            if several and on_eval is not None:
                tagged = lambda e, on_eval=on_eval, seed=s.config.train.seed: on_eval(
                    {**e, "seed": seed}
                )
            s.evals = _Evaluations(learner, s.run, s.log, tagged, config.eval.background)
            s.window = _window(s.run)
        if mesh is not None:  # B / D games on each device, the parameters on every one
            seeds[0].run.carry = mesh.place(seeds[0].run.carry)  # `chunk`: compiled for it
        elif len(devices) > 1:  # seed k on device k mod D; the jitted chunk compiles per device
            chunk = learner.chunk
            for k, s in enumerate(seeds):
                s.run.carry = jax.device_put(s.run.carry, devices[k % len(devices)])

        start = time.perf_counter()
        bar = tqdm(
            total=total,
            unit="game",
            disable=not progress,
            dynamic_ncols=True,
            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}{postfix}]",
        )
        bar.update(min(min(int(s.run.carry.games) for s in seeds), total))
        interrupted = stop.requested
        try:
            while not interrupted:
                before = [int(s.run.carry.games) for s in seeds]
                active = [b < total for b in before]
                if not any(active):
                    break
                tick = time.perf_counter()
                # every agent's chunk dispatched before any is waited for: on several devices
                # they run at once, on one device one after another
                per_seed = []
                for s, live in zip(seeds, active, strict=True):
                    if live:
                        s.run.carry, metric = chunk(s.run.carry)
                    per_seed.append(metric if live else None)
                jax.block_until_ready([s.run.carry for s in seeds])
                seconds = time.perf_counter() - tick
                for s, b, live, m in zip(seeds, before, active, per_seed, strict=True):
                    if live:
                        s.after_chunk(learner, b, m, seconds)
                lead = next(s for s, live in zip(seeds, active, strict=True) if live)
                record = lead.record
                bar.update(min(min(int(s.run.carry.games) for s in seeds), total) - bar.n)
                rate = sum(s.record["games_per_s"] for s, a in zip(seeds, active, strict=True) if a)
                bar.set_postfix_str(
                    f"{rate:,.0f} games/s{f' ({len(seeds)} seeds)' if several else ''}, "
                    f"eps {record['epsilon']:.3f}, alpha {record['alpha']:.3g}{lead.last_eval}",
                    refresh=False,
                )
                interrupted = stop.requested
            for s in seeds:  # before the end: the records of the background evaluations
                s.evals.wait()
        finally:
            bar.close()
            for s in seeds:
                if s.evals is not None:
                    s.evals.close()
        for s in seeds:
            _save(s.run_dir, s.run, s.config)
        if not interrupted:
            for s in seeds:
                s.evals.now(s.eval_key_now())
                if s.run_dir is not None and s.run.history and first_process:
                    from jaxgames import plots

                    plots.learning_curve(s.run_dir / "metrics.jsonl", s.run_dir / "curve.png")
        for s in seeds:
            s.log.close()
    wall = time.perf_counter() - start
    return [
        TrainResult(
            learner,
            s.run.carry,
            s.run.history,
            wall + s.run.resumed_seconds,
            compile_time,
            interrupted,
            s.run.average,
            s.run.average_count,
        )
        for s in seeds
    ]
