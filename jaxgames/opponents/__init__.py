"""Opponents: batched policies `policy(states, key) -> actions` to play and evaluate against."""

from jaxgames.opponents.random import random_policy

__all__ = ["random_policy"]
