"""Learners, registered by kind: TD/SARSA/Q-FARL (`farl`) and max/min Q-learning (`minimax_q`).

The contract a learner fulfils is in `api` (its settings type and a `LearnerDef` of
functions); the lockstep driver its training step is built on, in `lockstep`; the targets it
moves values toward, in `targets`; step-size and exploration schedules, in `schedules`.
docs/adding-a-learner.md shows how to add one.
"""

from jaxgames.learning import farl, minimax_q
from jaxgames.learning.api import LEARNERS, AlgorithmConfig, LearnerDef, learner, register_learner
from jaxgames.learning.schedules import Schedule

register_learner(farl.KINDS, farl.LEARNER)
register_learner("minimax_q", minimax_q.LEARNER)

__all__ = [
    "LEARNERS",
    "AlgorithmConfig",
    "LearnerDef",
    "Schedule",
    "learner",
    "register_learner",
]
