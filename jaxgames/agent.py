"""Trained agents loaded from checkpoints, for analysis: `jaxgames.load(path)`.

    agent = jaxgames.load("runs/ttt")            # a run folder, or one checkpoint folder
    agent.game, agent.config                     # what was trained, and how
    action = agent.policy(state, key)            # unbatched, jittable, greedy
    arena(agent.game, agent.batched(), ...)      # a batched policy for the arena

Loading reads JSON metadata and restores arrays into shapes derived from the saved config; no
training code runs and nothing in the checkpoint is executed.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import checkpoint
from jaxgames.config import Config
from jaxgames.core import Game, State
from jaxgames.selfplay import ParamPolicy
from jaxgames.training import Learner, make_learner


@dataclasses.dataclass(frozen=True)
class Agent:
    """A trained agent.

    Attributes:
        config: the resolved config it was trained with.
        game: the game.
        params: its parameters (a pytree of arrays).
        meta: the checkpoint's metadata (games, moves, wall time, versions).
        path: the checkpoint folder.
    """

    config: Config
    game: Game
    params: Any
    meta: dict
    path: pathlib.Path
    learner: Learner = dataclasses.field(repr=False)

    def policy(self, state: State, key: jax.Array) -> jax.Array:
        """The greedy move for one state (unbatched, jittable)."""
        return self.learner.greedy_action(self.params, state, key)

    def batched(self) -> ParamPolicy:
        """The greedy agent as a batched policy for `jaxgames.evaluation.arena`."""
        return self.learner.policy(self.params)

    def position_values(self, states: State) -> jax.Array:
        """float32[B]: the agent's value of each state for the player to move, the best of
        its move values (batched, jittable)."""

        def one(state):
            scores = self.learner.move_scores(self.params, state)
            return jnp.max(jnp.where(state.legal_action_mask, scores, -jnp.inf))

        return jax.vmap(one)(states)

    def move_values(self, state: State) -> np.ndarray:
        """float32[num_actions]: what the agent maximises for each move of `state`
        (r + gamma * V(afterstate) for TD, Q(s, a) for SARSA/Q); NaN for illegal moves."""
        scores = self.learner.move_scores(self.params, state)
        return np.where(np.asarray(state.legal_action_mask), np.asarray(scores), np.nan)


def load(path: str | pathlib.Path) -> Agent:
    """Loads the agent of a run folder (its newest checkpoint) or of one checkpoint folder.

    Raises:
        CheckpointError: missing, corrupt or non-finite checkpoint, with what to do.
    """
    config, meta, run_dir, step = checkpoint.read_meta(path)
    learner = make_learner(config)
    carry, meta = checkpoint.restore(
        run_dir / checkpoint.CHECKPOINTS / str(step),
        learner.init(jax.random.key(0)),
        params_only=True,
    )
    checkpoint.check_finite(carry.params, f"checkpoint {run_dir}/{checkpoint.CHECKPOINTS}/{step}")
    return Agent(
        config,
        learner.game,
        carry.params,
        meta,
        run_dir / checkpoint.CHECKPOINTS / str(step),
        learner,
    )
