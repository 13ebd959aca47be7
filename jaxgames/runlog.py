"""The run log: a run folder's records, the loggers they go to, and when host events are due.

A training run writes its records (one dict per training window or evaluation) to loggers: a
`Logger` is anything with `write(record)` and `close()`. `open_run` makes the run folder's
(`config.json`, `metrics.jsonl`, and TensorBoard scalars with `train.tensorboard`).

Host events (metrics records, evaluations, checkpoints, samples of the parameter average) fall
due at the first chunk end at or past each multiple of their period: `crossed(before, after,
every, start)`. The averaged parameters (`train.average_from`) are a running mean of samples
of the parameters: `average_period`, `accumulate`.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import math
import os
import pathlib
from collections.abc import Iterator
from typing import Any, Protocol

import jax
import jax.numpy as jnp

from jaxgames.config import Config, to_dict
from jaxgames.errors import RunInUse


class Logger(Protocol):
    """Where records go."""

    def write(self, record: dict) -> None: ...

    def close(self) -> None: ...


class JsonLines:
    """Records as JSON lines, appended and flushed one by one (non-finite numbers as null,
    so that every line stays valid JSON)."""

    def __init__(self, path: pathlib.Path):
        self._file = path.open("a")

    def write(self, record: dict) -> None:
        clean = {
            k: None if isinstance(v, float) and not math.isfinite(v) else v
            for k, v in record.items()
        }
        self._file.write(json.dumps(clean) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class TensorBoard:
    """Numeric fields of each record as TensorBoard scalars, `kind/name` against the record's
    training games (needs tensorboardX: pip install "jaxgames[tensorboard]")."""

    def __init__(self, folder: pathlib.Path):
        try:
            from tensorboardX import SummaryWriter
        except ImportError:
            raise ValueError(
                'train.tensorboard needs tensorboardX: pip install "jaxgames[tensorboard]"'
            ) from None
        self._writer = SummaryWriter(str(folder))

    def write(self, record: dict) -> None:
        for name, value in record.items():
            if isinstance(value, int | float) and name != "train_games":
                self._writer.add_scalar(f"{record['kind']}/{name}", value, record["train_games"])
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()


class Csv:
    """Records as CSV, one file per kind (RUN/train.csv, RUN/eval.csv), their columns the
    first record's numeric and text fields (nested ones, such as results by seat, are left to
    metrics.jsonl)."""

    def __init__(self, folder: pathlib.Path):
        self._folder = folder
        self._files: dict[str, tuple[Any, Any]] = {}

    def write(self, record: dict) -> None:
        import csv

        kind = str(record.get("kind", "record"))
        if kind not in self._files:
            path = self._folder / f"{kind}.csv"
            columns = [k for k, v in record.items() if isinstance(v, int | float | str)]
            fresh = not path.exists()
            handle = path.open("a", newline="")
            writer = csv.DictWriter(handle, columns, extrasaction="ignore")
            if fresh:
                writer.writeheader()
            self._files[kind] = (handle, writer)
        handle, writer = self._files[kind]
        writer.writerow(record)
        handle.flush()

    def close(self) -> None:
        for handle, _ in self._files.values():
            handle.close()


class WandB:
    """Numeric fields of each record logged to Weights & Biases as `kind/name` at the record's
    training games (needs wandb: pip install "jaxgames[wandb]"; WANDB_MODE=offline keeps the
    run on disk, under RUN/wandb)."""

    def __init__(self, folder: pathlib.Path, config: Config):
        try:
            import wandb
        except ImportError:
            raise ValueError(
                'log.backends: wandb needs wandb: pip install "jaxgames[wandb]"'
            ) from None
        self._run = wandb.init(
            project=config.log.wandb_project,
            dir=str(folder),
            name=folder.name,
            config=to_dict(config),
            reinit=True,
        )

    def write(self, record: dict) -> None:
        values = {
            f"{record['kind']}/{k}": v
            for k, v in record.items()
            if isinstance(v, int | float) and not isinstance(v, bool) and k != "train_games"
        }
        self._run.log(values, step=int(record["train_games"]))

    def close(self) -> None:
        self._run.finish()


class Loggers:
    """Several loggers as one (none: records are dropped)."""

    def __init__(self, loggers: list[Logger] | None = None):
        self.loggers = list(loggers or [])

    def write(self, record: dict) -> None:
        for logger in self.loggers:
            logger.write(record)

    def close(self) -> None:
        for logger in self.loggers:
            logger.close()


def open_run(run_dir: pathlib.Path, config: Config) -> Loggers:
    """Creates the run folder (if needed), writes its resolved `config.json` and returns its
    loggers: `metrics.jsonl`, and those of `log.backends` (TensorBoard, CSV, W&B)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps(to_dict(config), indent=2) + "\n")
    loggers: list[Logger] = [JsonLines(run_dir / "metrics.jsonl")]
    backends = set(config.log.backends) | ({"tensorboard"} if config.train.tensorboard else set())
    if "tensorboard" in backends:
        loggers.append(TensorBoard(run_dir / "tensorboard"))
    if "csv" in backends:
        loggers.append(Csv(run_dir))
    if "wandb" in backends:
        loggers.append(WandB(run_dir, config))
    return Loggers(loggers)


def drop_records_after(path: pathlib.Path, games: int) -> None:
    """Removes from a metrics file the records past `games` training games (and a line cut
    off by a crash), so that a run resumed from its checkpoint at `games` writes each game
    count once. The file is replaced whole (written beside it, then renamed)."""
    if not path.is_file():
        return
    keep = []
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("train_games", 0) <= games:
            keep.append(line)
    spare = path.with_name(path.name + ".tmp")
    spare.write_text("".join(line + "\n" for line in keep))
    spare.replace(path)


LOCK = ".lock"


@contextlib.contextmanager
def exclusive(run_dir: pathlib.Path) -> Iterator[None]:
    """Holds the run folder for one process (an exclusive lock on RUN/.lock, which the
    operating system releases however the process ends, so a killed run leaves no stale lock).
    A folder that this creates and that holds nothing else afterwards is removed again.

    Raises:
        RunInUse: another process holds it (the message names its process id).
    """
    if run_dir.is_symlink() and not run_dir.exists():
        raise RunInUse(f"{run_dir} is a symbolic link to nothing (or a loop of links)")
    created = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / LOCK
    handle = path.open("a+")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise RunInUse(
                f"{run_dir} is in use by a running jaxgames train (process {holder}); wait for "
                "it to finish, or choose another --run-dir"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        handle.close()
        if created and [p.name for p in run_dir.iterdir()] == [LOCK]:
            path.unlink()
            run_dir.rmdir()


def crossed(before: int, after: int, every: int, start: int = 0) -> bool:
    """Whether a chunk that took the game count from `before` to `after` passed one of
    start, start + every, start + 2 every, ... (never with `every` = 0)."""
    if not every or after < start:
        return False
    if before < start:
        return True
    return (after - start) // every > (before - start) // every


def log_period(config: Config) -> int:
    """Games between metrics records (train.log_every; 0 = about 100 per run)."""
    return config.train.log_every or max(1, config.train.games // 100)


def average_period(config: Config) -> int:
    """Games between samples of the parameter average (train.average_every; 0 = about 100
    samples over the averaged stretch)."""
    t = config.train
    return t.average_every or max(1, (t.games - t.average_from) // 100)


@functools.partial(jax.jit, donate_argnums=0)
def _accumulate(average: Any, params: Any, count: jax.Array) -> Any:
    def one(a, p):
        if not jnp.issubdtype(p.dtype, jnp.inexact):
            return p
        return a + (p - a) / count.astype(a.dtype)

    return jax.tree.map(one, average, params)


def accumulate(average: Any, params: Any, count: int) -> Any:
    """The running mean with one more sample (`count` samples in all, the first one starting
    it); leaves that are not floating point (step counters) take the latest value. The old
    mean is donated."""
    start = jax.tree.map(jnp.copy, params) if average is None else average
    return _accumulate(start, params, jnp.float32(count))
