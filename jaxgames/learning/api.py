"""The learner contract: a learner's settings and the functions that train and play with it.

A learner is a module with

* a settings type, a frozen dataclass derived from `AlgorithmConfig` whose `kind` field names
  it: what `algorithm:` in a preset loads, and what the learner's functions read (after
  `resolve`, which fills in the run's length);
* a `LearnerDef`: a frozen record of plain functions (mctx's `base.py` style, no classes to
  subclass), registered by kind with `register_learner`.

The training step is assembled from phases by the lockstep driver (`jaxgames.learning.lockstep`):
a learner provides how its B games choose their moves and how it learns from them; playing
the moves, restarting finished games and counting are the driver's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from jaxgames.approximators.base import ValueModel
from jaxgames.core import Game, State
from jaxgames.learning.schedules import Schedule
from jaxgames.types import Array, Carry, Params, PRNGKey, check_choices


@dataclasses.dataclass(frozen=True)
class AlgorithmConfig:
    """Settings every learner has; each learner extends it with its own (see its module).

    kind: which learner (the registry key).
    gamma: discount.
    random_opening_moves: the first k moves of every training game are random.
    alpha, epsilon: step-size and exploration schedules over finished training games
        (`jaxgames.learning.schedules`).
    """

    kind: str = ""
    gamma: float = 1.0
    random_opening_moves: int = 0
    alpha: Schedule = dataclasses.field(default_factory=lambda: Schedule("constant", 0.1))
    epsilon: Schedule = dataclasses.field(default_factory=lambda: Schedule("constant", 0.1))

    def __post_init__(self):
        check_choices(self)
        if not (self.alpha.start > 0 and self.alpha.end >= 0):
            raise ValueError(
                f"alpha {self.alpha}: the step size must start above 0 and end at 0 or above"
            )
        if not (0 <= self.epsilon.start <= 1 and 0 <= self.epsilon.end <= 1):
            raise ValueError(
                f"epsilon {self.epsilon}: a probability, expected start and end in [0, 1]"
            )
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"gamma={self.gamma}: expected in [0, 1]")
        if self.random_opening_moves < 0:
            raise ValueError(f"random_opening_moves={self.random_opening_moves}: expected >= 0")

    def resolve(self, run_games: int) -> AlgorithmConfig:
        """These settings with the schedules' lengths filled in from the run's (`games = 0`
        in a schedule means the whole run)."""
        return dataclasses.replace(
            self, alpha=self.alpha.resolve(run_games), epsilon=self.epsilon.resolve(run_games)
        )

    def describe(self) -> str:
        """One line for people (`jaxgames inspect`)."""
        return f"{self.kind}, alpha {self.alpha}, epsilon {self.epsilon}, gamma {self.gamma}"


@dataclasses.dataclass(frozen=True)
class LearnerDef:
    """A learner's functions. `config` below is the learner's resolved settings.

    Attributes:
        config_type: the settings dataclass `algorithm:` loads for this learner's kinds.
        heads: `heads(game, config) -> (num_players, num_outputs)`: the parameter sets and
            outputs the approximator needs (a value head over afterstates: 1 output; a Q head:
            one per action).
        init_carry: `init_carry(game, model, config, batch_size, key) -> carry`: fresh
            parameters and B fresh games (the carry is a NamedTuple with at least `states`,
            `params`, `games`, `moves` and `key`).
        make_step: `make_step(game, model, config, batch_size) -> step(carry, _) ->
            (carry, lockstep.Metrics)`: one lockstep move of all B games with learning.
        action_scores: `action_scores(game, model, config, params, state) -> float32[A]`:
            what the greedy mover maximises for every action of one state (unbatched).
        check: `check(game, config)` raises ValueError when the learner cannot play the game.
        per_game: the carry's fields whose arrays have the B games on their leading axis:
            data-parallel training splits them over the devices by game and replicates the
            rest (`jaxgames.parallel`). Naming too few only costs speed, never correctness.
    """

    config_type: type[AlgorithmConfig]
    heads: Callable[[Game, Any], tuple[int, int]]
    init_carry: Callable[[Game, ValueModel, Any, int, PRNGKey], Carry]
    make_step: Callable[[Game, ValueModel, Any, int], Callable]
    action_scores: Callable[[Game, ValueModel, Any, Params, State], Array]
    check: Callable[[Game, Any], None] = lambda game, config: None
    per_game: tuple[str, ...] = ("states",)


LEARNERS: dict[str, LearnerDef] = {}


def register_learner(kinds: str | tuple[str, ...], definition: LearnerDef) -> None:
    """Makes a learner available as `algorithm: {kind: KIND, ...}` for each of `kinds`."""
    for kind in (kinds,) if isinstance(kinds, str) else kinds:
        LEARNERS[kind] = definition


def learner(kind: str) -> LearnerDef:
    """The registered learner of a kind (raises ValueError naming the known kinds)."""
    if kind not in LEARNERS:
        raise ValueError(f"algorithm kind {kind!r}; expected one of {', '.join(LEARNERS)}")
    return LEARNERS[kind]
