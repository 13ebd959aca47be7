"""Trained agents loaded from checkpoints, for analysis: `jaxgames.load(path)`.

    agent = jaxgames.load("runs/ttt")            # a run folder, or one checkpoint folder
    agent.game, agent.config                     # what was trained, and how
    action = agent.policy(state, key)            # unbatched, jittable, greedy
    arena(agent.game, agent.batched(), ...)      # a batched policy for the arena

Loading reads the JSON metadata once and restores the parameters alone into shapes derived
from the saved config (`jax.eval_shape` of the approximator's init: nothing is allocated
before the arrays are read); no training code runs and nothing in the checkpoint is executed.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

import jax
import numpy as np

from jaxgames import checkpoint
from jaxgames.builders import Learner, make_learner
from jaxgames.config import Config
from jaxgames.core import Game, State
from jaxgames.policies import ParamPolicy


@dataclasses.dataclass(frozen=True)
class Agent:
    """A trained agent.

    Attributes:
        config: the resolved config it was trained with.
        game: the game.
        params: its parameters (a pytree of arrays): the mean of `average_count` samples
            when the run averaged them (train.average_from), else the latest.
        meta: the checkpoint's metadata (games, moves, wall time, versions).
        path: the checkpoint folder.
        average_count: samples in the averaged parameters (0: the latest parameters).
    """

    config: Config
    game: Game
    params: Any
    meta: dict
    path: pathlib.Path
    learner: Learner = dataclasses.field(repr=False)
    average_count: int = 0

    def policy(self, state: State, key: jax.Array) -> jax.Array:
        """The greedy move for one state (unbatched, jittable)."""
        return self.learner.greedy_action(self.params, state, key)

    def batched(self) -> ParamPolicy:
        """The greedy agent as a batched policy for `jaxgames.evaluation.arena`."""
        return self.learner.policy(self.params)

    def position_values(self, states: State) -> jax.Array:
        """float32[B]: the agent's value of each state for the player to move, the best of
        its move values (batched, jittable)."""
        return self.learner.position_values(self.params, states)

    def move_values(self, state: State) -> np.ndarray:
        """float32[num_actions]: what the agent maximises for each move of `state`
        (r + gamma * V(afterstate) for TD, Q(s, a) for SARSA/Q); NaN for illegal moves."""
        scores = self.learner.move_scores(self.params, state)
        return np.where(np.asarray(state.legal_action_mask), np.asarray(scores), np.nan)


WEIGHTS = ("average", "last")


def load(path: str | pathlib.Path, weights: str = "average") -> Agent:
    """Loads the agent of a run folder (its newest checkpoint) or of one checkpoint folder.

    Args:
        path: a run folder or one checkpoint folder.
        weights: "average": the averaged parameters when the run kept them
            (train.average_from), else the latest; "last": always the latest.

    Raises:
        CheckpointError: missing, corrupt or non-finite checkpoint, with what to do.
        ValueError: `weights` is neither "average" nor "last".
    """
    if weights not in WEIGHTS:
        raise ValueError(f"weights={weights!r}: expected one of {WEIGHTS}")
    config, meta, run_dir, step = checkpoint.read_meta(path)
    learner = make_learner(config, with_chunk=False)
    where = run_dir / checkpoint.CHECKPOINTS / str(step)
    params, count = checkpoint.restore_params(
        where, learner.abstract_params(), meta, average=weights == "average"
    )
    checkpoint.check_finite(params, f"checkpoint {where}")
    return Agent(config, learner.game, params, meta, where, learner, count)
