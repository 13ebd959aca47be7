"""The errors jaxgames reports to its users (a light module: the command catches them without
importing JAX)."""

from __future__ import annotations


class CheckpointError(ValueError):
    """A checkpoint is missing, unreadable, or does not fit what it is used for."""


class TrainingError(RuntimeError):
    """Training cannot go on (e.g. the values diverged)."""


class RunInUse(RuntimeError):
    """Another process holds the run folder."""
