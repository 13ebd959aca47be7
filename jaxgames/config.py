"""Typed, frozen configuration: one dataclass per concern, loaded from YAML presets.

A preset (`jaxgames.presets`) maps 1:1 onto `Config`:

    game:         {name: connect_four, options: {rows: 6, cols: 7}}
    approximator: {kind: ntuple, tuple_sets: [gbg-c4-70], tcl: exponential, ...}
    algorithm:    {kind: td, alpha: {kind: constant, start: 3.7}, epsilon: {...}, ...}
    train:        {games: 1000000, batch_size: 1024, seed: 0, ...}
    eval:         {opponent: perfect, games: 200, seats: first, every: 100000}

`approximator` and `algorithm` are each one settings type per kind, defined by the
approximator's or the learner's module and found through their registries: the `kind` key
picks the type, and the learner reads the very object the YAML loaded. Loading is strict and
safe: `yaml.safe_load` (no code runs); unknown keys and wrongly typed values raise
`ValueError` naming the key, the value and what was expected.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import types
import typing
from typing import Any, Literal

import yaml

from jaxgames.approximators import APPROXIMATORS, ApproximatorConfig
from jaxgames.approximators.ntuple import NTupleConfig
from jaxgames.learning import LEARNERS, AlgorithmConfig
from jaxgames.learning.farl import FarlConfig


@dataclasses.dataclass(frozen=True)
class GameConfig:
    """Which game: a registry name and its options."""

    name: str = "tictactoe"
    options: dict[str, int] = dataclasses.field(default_factory=dict)


MAX_BATCH = 2**22  # games in lockstep; the memory they need is checked before training
MAX_GAMES = 2_100_000_000  # with a chunk's overshoot, below 2^31 (int32 counters)
MAX_SEEDS = 1024  # agents of one run (train.seeds)

# settings types chosen by their `kind` key: (the registry of kinds, the kind when none is given)
_BY_KIND: dict[type, tuple[dict[str, Any], str]] = {
    ApproximatorConfig: (APPROXIMATORS, "ntuple"),
    AlgorithmConfig: (LEARNERS, "td"),
}


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """The training run.

    games: train until this many games have finished.
    batch_size: B games in lockstep.
    chunk_steps: lockstep moves per jitted chunk (0 = automatic).
    seed: the run's PRNG seed.
    seeds: train this many independent agents in one process, with seeds `seed`,
        `seed + 1`, ..., sharing one compiled step (`jaxgames.training.train_seeds`); each
        agent equals the one a single run with its seed trains, and has its own folder
        RUN/seed-S.
    devices: how many of the visible devices a run uses (0 = all of them, as many as
        divide the count below; 1 = the first device only). A run of several seeds spreads
        its agents over them, a share of the seeds each, with no communication: each agent
        is still the one its seed trains alone. A run of one seed splits its B games over
        them (data parallel, `jaxgames.parallel`: B / D games per device, the parameters
        replicated, the update rows gathered whole every step), with results equal to one
        device's to float32 rounding.
    checkpoint_every: save a checkpoint every this many games (0 = only at the end).
    keep_checkpoints: how many recent checkpoints to keep.
    log_every: write a metrics record every this many games (0 = about 100 per run).
    tensorboard: also write the records as TensorBoard scalars to RUN/tensorboard (the same
        as `log.backends: [tensorboard]`; needs pip install "jaxgames[tensorboard]").
    average_from: from this many games on, also keep the mean of the parameters, sampled
        every `average_every` games (tail or Polyak-Ruppert averaging: it steadies the
        agent that a constant step size leaves jittering); evaluations, the checkpoints'
        agent and `jaxgames eval` play with the mean, training goes on with the latest
        parameters. None = off (the agent is the latest parameters, as in GBG); a start at or
        past train.games averages nothing (a shortened run of a preset that averages).
    average_every: games between samples of the mean, taken at chunk ends (0 = automatic:
        about 100 samples, at most one per chunk).
    """

    games: int = 10_000
    batch_size: int = 64
    chunk_steps: int = 0
    seed: int = 0
    seeds: int = 1
    devices: int = 0
    checkpoint_every: int = 0
    keep_checkpoints: int = 3
    log_every: int = 0
    tensorboard: bool = False
    average_from: int | None = None
    average_every: int = 0


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    """Evaluation: opponent name (random, perfect, perfect-dl, mcts:N, ...), games per seat,
    seats ("all", "first", "second"), every how many training games (0 = at the end only),
    and opening plies to start from (0 = the empty board).

    background: run the periodic evaluations beside training, on a host thread with a copy
    of the parameters, instead of stopping training for them; each record is written when it
    is done, with the game count it belongs to, and equals what the foreground evaluation
    (and `jaxgames eval` of that checkpoint) gives. Worth it where training runs on an
    accelerator and the opponent is a host search (the perfect Connect Four player takes
    1.5-2 minutes per 200 games); on a small CPU it competes with training for the cores.
    The evaluation at the end of the run waits for the ones still running.

    devices: split the evaluation's games over this many of the visible devices (0 = all of
    them, as many as divide the number of games; 1 = the first device only), as
    `evaluation.arena(..., devices=)` does.
    """

    opponent: str = "perfect"
    games: int = 500
    seats: Literal["all", "first", "second"] = "all"
    every: int = 0
    openings: int = 0
    background: bool = False
    devices: int = 0


@dataclasses.dataclass(frozen=True)
class LogConfig:
    """Where a run's records go besides RUN/metrics.jsonl, which is always written.

    backends: any of "tensorboard" (RUN/tensorboard, the `tensorboard` extra), "csv"
        (RUN/train.csv and RUN/eval.csv) and "wandb" (Weights & Biases, the `wandb` extra;
        WANDB_MODE=offline keeps it on disk).
    wandb_project: the W&B project.
    """

    backends: tuple[Literal["tensorboard", "csv", "wandb"], ...] = ()
    wandb_project: str = "jaxgames"


@dataclasses.dataclass(frozen=True)
class Config:
    """A whole experiment."""

    game: GameConfig = dataclasses.field(default_factory=GameConfig)
    approximator: ApproximatorConfig = dataclasses.field(default_factory=NTupleConfig)
    algorithm: AlgorithmConfig = dataclasses.field(default_factory=FarlConfig)
    train: TrainConfig = dataclasses.field(default_factory=TrainConfig)
    eval: EvalConfig = dataclasses.field(default_factory=EvalConfig)
    log: LogConfig = dataclasses.field(default_factory=LogConfig)
    description: str = ""

    def __post_init__(self):
        check_config(self)


def check_config(config: Config) -> None:
    """Checks across sections (each section checks its own values when it is built); raises
    ValueError naming the bad settings."""
    from jaxgames.registry import make  # the game first: every other check presumes one

    problems = []
    game = None
    try:
        game = make(config.game.name, **config.game.options)
    except ValueError as e:
        problems.append(f"game: {e}")
    for section, value, base in (
        ("approximator", config.approximator, ApproximatorConfig),
        ("algorithm", config.algorithm, AlgorithmConfig),
    ):
        registry = _BY_KIND[base][0]
        if value.kind not in registry or not isinstance(value, registry[value.kind].config_type):
            problems.append(
                f"{section}.kind={value.kind!r}: expected one of {', '.join(registry)} with its "
                "own settings type"
            )
    ap = config.approximator
    if isinstance(ap, NTupleConfig) and not ap.has_tuples():
        problems.append(
            "approximator: give tuple_sets, tuples, or num_tuples >= 1 random walks of "
            f"tuple_length >= 1 cells (got num_tuples={ap.num_tuples}, "
            f"tuple_length={ap.tuple_length})"
        )
    t = config.train
    if t.games < 1:
        problems.append(f"train.games={t.games}: expected >= 1")
    if not 0 <= t.seed < 2**32:
        problems.append(f"train.seed={t.seed}: expected an integer in [0, 2^32)")
    if not 1 <= t.seeds <= MAX_SEEDS or (0 <= t.seed < 2**32 and t.seed + t.seeds > 2**32):
        problems.append(
            f"train.seeds={t.seeds}: expected 1 to {MAX_SEEDS} agents whose seeds "
            f"train.seed .. train.seed + seeds - 1 stay below 2^32"
        )
    if t.devices < 0:
        problems.append(f"train.devices={t.devices}: expected >= 0 (0 = every visible device)")
    if t.games > MAX_GAMES:
        problems.append(
            f"train.games={t.games:,}: at most {MAX_GAMES:,} (the counters are 32-bit integers)"
        )
    if t.batch_size > MAX_BATCH:
        problems.append(f"train.batch_size={t.batch_size:,}: expected at most {MAX_BATCH:,}")
    if t.batch_size < 1:
        problems.append(f"train.batch_size={t.batch_size}: expected >= 1")
    if t.chunk_steps < 0:
        problems.append(f"train.chunk_steps={t.chunk_steps}: expected >= 0 (0 = automatic)")
    elif t.chunk_steps * t.batch_size > 2**26:
        problems.append(
            f"train.chunk_steps={t.chunk_steps:,} x batch_size {t.batch_size:,}: at most 2^26 "
            "moves per chunk"
        )
    if t.checkpoint_every < 0 or t.log_every < 0:
        problems.append("train.checkpoint_every and train.log_every must be >= 0")
    if t.keep_checkpoints < 1:
        problems.append(f"train.keep_checkpoints={t.keep_checkpoints}: expected >= 1")
    if t.average_from is not None and t.average_from < 0:
        problems.append(
            f"train.average_from={t.average_from}: expected a game count >= 0, or null for no "
            "averaging"
        )
    if t.average_every < 0:
        problems.append(f"train.average_every={t.average_every}: expected >= 0 (0 = automatic)")
    if config.eval.games < 1:
        problems.append(f"eval.games={config.eval.games}: expected >= 1")
    if config.eval.devices < 0:
        problems.append(
            f"eval.devices={config.eval.devices}: expected >= 0 (0 = every visible device)"
        )
    if config.eval.every < 0:
        problems.append(f"eval.every={config.eval.every}: expected >= 0")
    if game is not None and config.algorithm.kind in LEARNERS:
        try:
            LEARNERS[config.algorithm.kind].check(game, config.algorithm)
        except ValueError as e:
            problems.append(f"algorithm: {e}")
    if game is not None:
        from jaxgames.opponents import check_opponent

        try:
            check_opponent(config.eval.opponent, game)
        except ValueError as e:
            problems.append(f"eval.opponent: {e}")
        if config.algorithm.random_opening_moves > game.max_moves:
            problems.append(
                f"algorithm.random_opening_moves={config.algorithm.random_opening_moves}: "
                f"expected at most {game.max_moves} (no {game.name} game is longer)"
            )
        if config.eval.openings > game.max_moves:
            problems.append(
                f"eval.openings={config.eval.openings}: expected at most {game.max_moves} plies"
            )
    if problems:
        raise ValueError("invalid config: " + "; ".join(problems))


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _convert(value: Any, tp: Any, where: str) -> Any:
    """Checks/converts a YAML value to the annotated type; raises ValueError otherwise."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp in _BY_KIND:
        tp = _kind_type(value, tp, where)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ValueError(
                f"{where}: expected a mapping of {_type_name(tp)} fields, got {value!r}"
            )
        return from_dict(typing.cast(type, tp), value, where)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return _convert(value, option, where)
            except ValueError as e:
                errors.append(str(e))
        raise ValueError(errors[0])
    if origin is Literal:
        if value not in args:
            choices = ", ".join(repr(a) for a in args)
            raise ValueError(f"{where}={value!r}: expected one of {choices}")
        return value
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ValueError(f"{where}={value!r}: expected a list")
        inner = args[0]
        return tuple(_convert(v, inner, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise ValueError(f"{where}={value!r}: expected a mapping")
        return {str(k): _convert(v, args[1], f"{where}.{k}") for k, v in value.items()}
    if tp is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{where}={value!r}: expected true or false")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{where}={value!r}: expected an integer")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{where}={value!r}: expected a number")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ValueError(f"{where}={value!r}: expected a string")
        return value
    raise ValueError(f"{where}: unsupported type {tp}")


def _kind_type(value: Any, base: type, where: str) -> type:
    """The registered settings type that a mapping's `kind` selects among `base`'s kinds."""
    registry, default = _BY_KIND[base]
    kind = value.get("kind", default) if isinstance(value, dict) else default
    if kind not in registry:
        raise ValueError(f"{where}.kind={kind!r}: expected one of {', '.join(registry)}")
    return registry[kind].config_type


def cli_type(config: Config) -> type:
    """A subclass of Config whose approximator and algorithm fields have the concrete types of
    `config`'s, so that command-line parsers (tyro) list and type exactly their settings."""
    fields = [
        ("approximator", type(config.approximator), dataclasses.field(default=None)),
        ("algorithm", type(config.algorithm), dataclasses.field(default=None)),
    ]
    return dataclasses.make_dataclass("Config", fields, bases=(Config,), frozen=True)


def with_kind(config: Config, section: str, kind: str) -> Config:
    """`config` with its approximator or algorithm of another kind: the new kind's settings,
    each taken from the old settings where they have the same name, else its default.

    Raises:
        ValueError: an unknown kind, or settings the new kind cannot take.
    """
    old = getattr(config, section)
    base = ApproximatorConfig if section == "approximator" else AlgorithmConfig
    registry = _BY_KIND[base][0]
    if kind not in registry:
        raise ValueError(f"{section}.kind={kind!r}: expected one of {', '.join(registry)}")
    tp = registry[kind].config_type
    shared = {
        f.name: getattr(old, f.name)
        for f in dataclasses.fields(tp)
        if f.name != "kind" and hasattr(old, f.name)
    }
    try:
        new = tp(kind=kind, **shared)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{section}.kind={kind!r}: {e}") from None
    return dataclasses.replace(config, **{section: new})


def as_config(config: Config) -> Config:
    """A plain Config with the same settings (from an instance of a `cli_type` subclass)."""
    return Config(**{f.name: getattr(config, f.name) for f in dataclasses.fields(Config)})


def from_saved(data: dict, where: str) -> Config:
    """A Config from the JSON saved in a checkpoint. Checkpoints written before each
    approximator and learner had its own settings type hold every kind's fields in both
    sections; those that the saved kind does not have are dropped (they had no effect)."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a mapping, got {type(data).__name__}")
    data = dict(data)
    for section, base in (("approximator", ApproximatorConfig), ("algorithm", AlgorithmConfig)):
        value = data.get(section)
        if isinstance(value, dict):
            tp = _kind_type(value, base, f"{where}.{section}")
            known = {f.name for f in dataclasses.fields(tp)}
            data[section] = {k: v for k, v in value.items() if k in known}
    return from_dict(Config, data, where)


def from_dict(cls: type, data: dict, where: str = "config") -> Any:
    """Builds dataclass `cls` from a plain mapping, strictly (unknown keys are errors)."""
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - fields)
    if unknown:
        raise ValueError(
            f"unknown key(s) {', '.join(repr(k) for k in unknown)} in {where}; "
            f"valid keys: {', '.join(sorted(fields))}"
        )
    kwargs = {k: _convert(v, hints[k], f"{where}.{k}") for k, v in data.items()}
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where}: {e}") from None


def to_dict(config: Any) -> dict:
    """A plain, JSON-ready mapping of a config (tuples become lists)."""
    return json.loads(json.dumps(dataclasses.asdict(config)))


MAX_CONFIG_BYTES = 1_000_000


class _StrictLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a key given twice in one mapping (PyYAML keeps the last)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is given twice", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep)


MAX_BASE_DEPTH = 8


def _read_mapping(path: pathlib.Path) -> dict:
    """One YAML (or JSON) file's top-level mapping, strictly; ValueError naming the file."""
    if not path.is_file():
        raise ValueError(f"config file {str(path)!r} not found")
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise ValueError(
            f"config file {str(path)!r} is {path.stat().st_size:,} bytes; a config is at most "
            f"{MAX_CONFIG_BYTES:,}"
        )
    try:
        data = yaml.load(path.read_text(), Loader=_StrictLoader)  # safe: no tags run code
    except yaml.YAMLError as e:
        raise ValueError(
            f"config file {str(path)!r} is not valid YAML: {' '.join(str(e).split())}"
        ) from None
    except RecursionError:
        raise ValueError(f"config file {str(path)!r} is nested too deeply") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"config file {str(path)!r} is not UTF-8 text: {e}") from None
    if not isinstance(data, dict):
        raise ValueError(
            f"config file {str(path)!r} must hold a mapping, got {type(data).__name__}"
        )
    return data


def _base_path(base: Any, path: pathlib.Path) -> pathlib.Path:
    """The file that `base: ...` in the file `path` names: a YAML file (relative to `path`'s
    folder) or, failing that, a shipped preset's name."""
    from jaxgames import presets

    if not isinstance(base, str) or not base:
        raise ValueError(
            f"{path.name}: base={base!r}: expected a preset's name or a YAML file's path"
        )
    given = path.parent / base
    if given.is_file():
        return given
    found = presets.shipped(base)
    if found is not None:
        return found
    raise ValueError(
        f"{path.name}: base={base!r} is neither a file beside it nor a preset; "
        f"presets: {', '.join(presets.names())}"
    )


def merge(base: dict, child: dict) -> dict:
    """`child`'s settings over `base`'s: mappings merge key by key, all else (numbers, strings,
    lists) replaces; a mapping whose `kind` differs from the base's replaces it whole (the
    base's settings belong to its own kind)."""
    out = dict(base)
    for key, value in child.items():
        old = out.get(key)
        same_kind = not (isinstance(value, dict) and "kind" in value) or (
            isinstance(old, dict) and old.get("kind") == value["kind"]
        )
        if isinstance(old, dict) and isinstance(value, dict) and same_kind:
            out[key] = merge(old, value)
        else:
            out[key] = value
    return out


def read_config_mapping(path: str | pathlib.Path) -> dict:
    """A config file's settings as one mapping, its `base` chain resolved.

    A file may start from another with `base: NAME`, a preset's name or a YAML file's path
    (relative to the file's folder), and give only what differs (`merge`):

        base: connect4-td-farl
        description: connect4-td-farl with a falling step size.
        algorithm: {alpha: {kind: exponential, start: 3.7, end: 0.5}}

    Raises:
        ValueError: any file of the chain missing, unreadable or not a mapping; a `base` that
            names nothing; a chain that loops or has more than MAX_BASE_DEPTH bases.
    """
    path = pathlib.Path(path)
    chain = [path]
    data = _read_mapping(path)
    layers = [data]
    while "base" in data:
        parent = _base_path(data["base"], chain[-1])
        if any(parent.resolve() == p.resolve() for p in chain):
            names = " -> ".join(p.name for p in [*chain, parent])
            raise ValueError(f"{path.name}: its base chain loops: {names}")
        if len(chain) > MAX_BASE_DEPTH:  # chain[1:] are the bases so far
            raise ValueError(f"{path.name}: its base chain has more than {MAX_BASE_DEPTH} bases")
        chain.append(parent)
        data = _read_mapping(parent)
        layers.append(data)
    out: dict = {}
    for layer in reversed(layers):
        out = merge(out, {k: v for k, v in layer.items() if k != "base"})
    return out


def load_config(path: str | pathlib.Path) -> Config:
    """Reads a preset (YAML or JSON), its `base` chain resolved (`read_config_mapping`).
    Raises ValueError for a missing, unreadable or invalid file, naming the path and the
    problem."""
    path = pathlib.Path(path)
    return from_dict(Config, read_config_mapping(path), where=path.name)
