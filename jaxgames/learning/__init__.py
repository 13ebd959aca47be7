"""Learning: targets, schedules, and the player-centred TD/SARSA/Q-FARL learner (`farl`)."""

from jaxgames.learning.schedules import Schedule

__all__ = ["Schedule"]
