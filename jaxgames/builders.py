"""From a Config to the static parts of a run: the game, the approximator, the learner.

`make_learner(config)` builds everything static and returns a `Learner`: the game, the
approximator bound to it (`ValueModel`), the learner's resolved settings and functions, and
(for training) a jitted, carry-donating `chunk(carry)` that advances all B games
`chunk_steps` lockstep moves. Loading an agent builds the same record without the chunk;
nothing here trains.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames import parallel
from jaxgames.approximators import ValueModel, make_model
from jaxgames.config import Config
from jaxgames.core import Game, State
from jaxgames.learning import LearnerDef, learner, lockstep
from jaxgames.learning.api import AlgorithmConfig
from jaxgames.policies import ParamPolicy
from jaxgames.types import Array, Carry, Params, PRNGKey


def build_game(config: Config) -> Game:
    """The configured game."""
    return jaxgames.make(config.game.name, **config.game.options)


def build_model(config: Config, game: Game) -> ValueModel:
    """The approximator of `config` bound to `game`, with the heads its learner needs (a value
    head over afterstates for TD, a Q head otherwise; one parameter set per player, except for
    max/min Q-learning's single Q function). Its `update` takes the rows of every game on
    every device when the step runs on a mesh (`jaxgames.parallel.gathered`)."""
    definition = learner(config.algorithm.kind)
    definition.check(game, config.algorithm)
    players, outputs = definition.heads(game, config.algorithm)
    model = make_model(game, config.approximator, players, outputs)
    # on a mesh of devices the update rows are gathered whole first (jaxgames.parallel)
    return dataclasses.replace(model, update=parallel.gathered(model.update))


def chunk_steps(config: Config) -> int:
    """Lockstep steps per jitted chunk: the configured value, or automatic: up to 20k moves
    per chunk, and few enough that a run overshoots its game budget by only a few percent."""
    t = config.train
    moves = int(np.clip(t.games // 4, 64, 20_000))
    return t.chunk_steps or max(1, moves // t.batch_size)


@dataclasses.dataclass(frozen=True)
class Learner:
    """Everything static about a run, plus its jitted functions.

    Attributes:
        config: the whole experiment.
        game: the game.
        model: the approximator bound to the game.
        settings: the learner's settings, resolved for the run's length (schedules filled in).
        definition: the learner's functions (`jaxgames.learning.api.LearnerDef`).
        chunk: the jitted training chunk (None when built for analysis only).
    """

    config: Config
    game: Game
    model: ValueModel
    settings: AlgorithmConfig
    definition: LearnerDef
    chunk: Any = None  # jitted: chunk(carry) -> (carry, lockstep.Metrics), or None

    def init(self, key: PRNGKey) -> Carry:
        """A fresh training carry: parameters, B games in progress, the learner's state."""
        batch = self.config.train.batch_size
        return self.definition.init_carry(self.game, self.model, self.settings, batch, key)

    def abstract_params(self) -> Any:
        """The shapes and dtypes of the parameters (`jax.eval_shape`; nothing allocated)."""
        return self.model.abstract_params()

    def policy(self, params: Params) -> ParamPolicy:
        """The greedy agent for these parameters (a batched ParamPolicy)."""
        return lockstep.greedy_policy(self.definition, self.game, self.model, self.settings, params)

    def greedy_action(self, params: Params, state: State, key: PRNGKey) -> Array:
        """The greedy move for one state (unbatched, jittable)."""
        return lockstep.greedy_action(
            self.definition, self.game, self.model, self.settings, params, state, key
        )

    def position_values(self, params: Params, states: State) -> Array:
        """float32[B]: the value of each state for the player to move, the best of its move
        scores over the legal moves (batched, jittable)."""

        def one(state: State) -> Array:
            scores = self.move_scores(params, state)
            return jnp.max(jnp.where(state.legal_action_mask, scores, -jnp.inf))

        return jax.vmap(one)(states)

    def move_scores(self, params: Params, state: State) -> Array:
        """float32[A]: what the greedy mover maximises for each action of one state
        (unbatched): r + gamma * V(afterstate) for TD, Q(s, a) for SARSA/Q, +-Q for
        minimax_q (the second player minimises Q)."""
        return self.definition.action_scores(self.game, self.model, self.settings, params, state)


def make_learner(config: Config, with_chunk: bool = True) -> Learner:
    """The Learner of `config`; `with_chunk=False` skips the training step (for analysis)."""
    game = build_game(config)
    model = build_model(config, game)
    definition = learner(config.algorithm.kind)
    settings = config.algorithm.resolve(config.train.games)
    chunk = None
    if with_chunk:
        step = definition.make_step(game, model, settings, config.train.batch_size)
        chunk = lockstep.jit_chunk(step, chunk_steps(config))
    return Learner(config, game, model, settings, definition, chunk)


__all__ = ["Learner", "build_game", "build_model", "chunk_steps", "make_learner"]
