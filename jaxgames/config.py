"""Typed, frozen configuration: one dataclass per concern, loaded from YAML presets.

A preset in `configs/*.yaml` maps 1:1 onto `Config`:

    game:         {name: connect_four, options: {rows: 6, cols: 7}}
    approximator: {kind: ntuple, num_tuples: 70, tuple_length: 8, tcl: exponential, ...}
    algorithm:    {kind: td, alpha: {kind: constant, start: 3.7}, epsilon: {...}, ...}
    train:        {games: 1000000, batch_size: 1024, seed: 0, ...}
    eval:         {opponent: perfect, games: 200, seats: first, every: 100000}

Loading is strict and safe: `yaml.safe_load` (no code runs), unknown keys and wrongly typed
values raise `ValueError` naming the key, the value and what was expected.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import types
import typing
from typing import Any, Literal

import yaml

from jaxgames.learning.schedules import Schedule


@dataclasses.dataclass(frozen=True)
class GameConfig:
    """Which game: a registry name and its options."""

    name: str = "tictactoe"
    options: dict[str, int] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class ApproximatorConfig:
    """The value function.

    kind: "ntuple", "tabular", "linear" or "cnn".
    tuples: explicit tuples (lists of cells); when absent, `num_tuples` random walks of
        `tuple_length` cells are drawn with `tuple_seed`.
    symmetries: sum over the board's symmetries (n-tuple, tabular).
    output: "tanh" or "identity".
    tcl: temporal coherence learning: "none", "identity" or "exponential" (beta `tcl_beta`,
        accumulators start at `tcl_init`).
    combine: how hits of several games on one weight in one lockstep step combine:
        "sequential" (like that many sequential updates: n-tuple and tabular by component
        averaging, linear by summing), "weight" (n-tuple and tabular: the earlier per-weight
        rule, kept so that results measured with it reproduce) or "mean".
    features: the linear feature set: "raw" (one-hot cells, any game) or "fiar" (seed 000's
        Connect Four features, any board size).
    channels, hidden, optimizer: the CNN's 3x3 conv layers, dense width and optax optimizer
        ("adam" or "sgd"; the step size is `algorithm.alpha`).
    """

    kind: Literal["ntuple", "tabular", "linear", "cnn"] = "ntuple"
    tuples: tuple[tuple[int, ...], ...] | None = None
    num_tuples: int = 0
    tuple_length: int = 0
    tuple_seed: int = 0
    symmetries: bool = True
    output: Literal["tanh", "identity"] = "tanh"
    tcl: Literal["none", "identity", "exponential"] = "none"
    tcl_beta: float = 2.7
    tcl_init: float = 1e-4
    combine: Literal["sequential", "weight", "mean"] = "sequential"
    features: Literal["raw", "fiar"] = "raw"
    channels: tuple[int, ...] = (32, 32)
    hidden: int = 64
    optimizer: Literal["adam", "sgd"] = "adam"


@dataclasses.dataclass(frozen=True)
class AlgorithmConfig:
    """How to learn (see `jaxgames.learning.farl`).

    kind: "td" (afterstate values), "sarsa" or "q" (player-centred FARL forms), or
        "minimax_q" (seed 003: one Q function, max for the first player and min for the
        second; see `jaxgames.learning.minimax_q`).
    lam, horizon_cut: eligibility lambda and the cut that sets the horizon.
    farl_others / farl_terminal: Final Adaptation parts 1 and 2 (both off = "no-FARL").
    alpha, epsilon: schedules over finished training games.
    reward_scale: rewards are multiplied by this for learning (2048: tile sums into the range
        of the values); reported scores stay raw.
    replay_size, replay_batch, target_every: minimax_q's experience replay (0 = none: update
        on the transitions just made) and target network (0 = none).
    """

    kind: Literal["td", "sarsa", "q", "minimax_q"] = "td"
    gamma: float = 1.0
    lam: float = 0.0
    horizon_cut: float = 0.1
    farl_others: bool = True
    farl_terminal: bool = True
    learn_from_random_moves: bool = True
    reset_on_random: bool = False
    win_first: bool = False
    random_opening_moves: int = 0
    reward_scale: float = 1.0
    alpha: Schedule = dataclasses.field(default_factory=lambda: Schedule("constant", 0.1))
    epsilon: Schedule = dataclasses.field(default_factory=lambda: Schedule("constant", 0.1))
    replay_size: int = 0
    replay_batch: int = 256
    target_every: int = 0


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """The training run.

    games: train until this many games have finished.
    batch_size: B games in lockstep.
    chunk_steps: lockstep moves per jitted chunk (0 = automatic).
    seed: the run's PRNG seed.
    checkpoint_every: save a checkpoint every this many games (0 = only at the end).
    keep_checkpoints: how many recent checkpoints to keep.
    log_every: write a metrics record every this many games (0 = about 100 per run).
    tensorboard: also write the records as TensorBoard scalars to RUN/tensorboard (needs the
        `tensorboard` extra: pip install "jaxgames[tensorboard]").
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
    and opening plies to start from (0 = the empty board)."""

    opponent: str = "perfect"
    games: int = 500
    seats: Literal["all", "first", "second"] = "all"
    every: int = 0
    openings: int = 0


@dataclasses.dataclass(frozen=True)
class Config:
    """A whole experiment."""

    game: GameConfig = dataclasses.field(default_factory=GameConfig)
    approximator: ApproximatorConfig = dataclasses.field(default_factory=ApproximatorConfig)
    algorithm: AlgorithmConfig = dataclasses.field(default_factory=AlgorithmConfig)
    train: TrainConfig = dataclasses.field(default_factory=TrainConfig)
    eval: EvalConfig = dataclasses.field(default_factory=EvalConfig)
    description: str = ""

    def __post_init__(self):
        check_config(self)


def check_config(config: Config) -> None:
    """Value checks beyond types; raises ValueError naming the bad setting."""
    from jaxgames.registry import make  # the game first: every other check presumes one

    problems = []
    try:
        make(config.game.name, **config.game.options)
    except ValueError as e:
        problems.append(f"game: {e}")
    t, a = config.train, config.algorithm
    if t.games < 1:
        problems.append(f"train.games={t.games}: expected >= 1")
    if t.batch_size < 1:
        problems.append(f"train.batch_size={t.batch_size}: expected >= 1")
    if t.chunk_steps < 0:
        problems.append(f"train.chunk_steps={t.chunk_steps}: expected >= 0 (0 = automatic)")
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
    if not 0.0 <= a.gamma <= 1.0:
        problems.append(f"algorithm.gamma={a.gamma}: expected in [0, 1]")
    if not 0.0 <= a.lam < 1.0:
        problems.append(f"algorithm.lam={a.lam}: expected in [0, 1)")
    if not 0.0 < a.horizon_cut < 1.0:
        problems.append(f"algorithm.horizon_cut={a.horizon_cut}: expected in (0, 1)")
    if not a.reward_scale > 0:
        problems.append(f"algorithm.reward_scale={a.reward_scale}: expected > 0")
    if a.reset_on_random and a.learn_from_random_moves:
        problems.append(
            "algorithm.reset_on_random=true has no effect while learn_from_random_moves is "
            "true (as in GBG, only a random move that is not learned from clears the "
            "eligibility histories): set learn_from_random_moves: false, or drop it"
        )
    if a.random_opening_moves < 0:
        problems.append(f"algorithm.random_opening_moves={a.random_opening_moves}: expected >= 0")
    if config.eval.games < 1:
        problems.append(f"eval.games={config.eval.games}: expected >= 1")
    if config.eval.every < 0:
        problems.append(f"eval.every={config.eval.every}: expected >= 0")
    ap = config.approximator
    if ap.kind == "ntuple" and ap.tuples is None and (ap.num_tuples < 1 or ap.tuple_length < 1):
        problems.append(
            "approximator: give `tuples`, or `num_tuples` >= 1 and `tuple_length` >= 1 "
            f"for random walks (got num_tuples={ap.num_tuples}, tuple_length={ap.tuple_length})"
        )
    if a.replay_size < 0 or a.target_every < 0:
        problems.append(
            f"algorithm.replay_size={a.replay_size}, algorithm.target_every={a.target_every}: "
            "expected >= 0"
        )
    if a.replay_size and not 1 <= a.replay_batch <= a.replay_size:
        problems.append(
            f"algorithm.replay_batch={a.replay_batch}: expected 1..replay_size ({a.replay_size})"
        )
    if (a.replay_size or a.target_every) and a.kind != "minimax_q":
        problems.append(
            f"algorithm.replay_size / target_every are for kind minimax_q, not {a.kind!r}"
        )
    if ap.kind == "cnn" and (not ap.channels or min(ap.channels) < 1 or ap.hidden < 1):
        problems.append(
            f"approximator.channels={list(ap.channels)}, hidden={ap.hidden}: expected >= 1"
        )
    if problems:
        raise ValueError("invalid config: " + "; ".join(problems))


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _convert(value: Any, tp: Any, where: str) -> Any:
    """Checks/converts a YAML value to the annotated type; raises ValueError otherwise."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ValueError(
                f"{where}: expected a mapping of {_type_name(tp)} fields, got {value!r}"
            )
        return from_dict(tp, value, where)
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


def load_config(path: str | pathlib.Path) -> Config:
    """Reads a preset (YAML or JSON). Raises ValueError for a missing, unreadable or invalid
    file, naming the path and the problem."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"config file {str(path)!r} not found")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise ValueError(f"config file {str(path)!r} is not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise ValueError(
            f"config file {str(path)!r} must hold a mapping, got {type(data).__name__}"
        )
    return from_dict(Config, data, where=path.name)
