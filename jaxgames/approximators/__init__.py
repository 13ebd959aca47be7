"""Approximators: n-tuple, tabular, linear and CNN value functions, registered by kind.

Each module defines its settings (`NTupleConfig`, ...) and `make_model(game, config,
num_players, num_outputs) -> ValueModel`; the contract they share is in `base`. To add one,
write the module and register it here (or call `register_approximator` from your own code).
"""

from __future__ import annotations

from jaxgames.approximators import cnn, linear, ntuple, tabular
from jaxgames.approximators.base import (
    APPROXIMATORS,
    ApproximatorConfig,
    Hits,
    ValueModel,
    make_model,
    register_approximator,
)

register_approximator("ntuple", ntuple.NTupleConfig, ntuple.make_model)
register_approximator("tabular", tabular.TabularConfig, tabular.make_model)
register_approximator("linear", linear.LinearConfig, linear.make_model)
register_approximator("cnn", cnn.CNNConfig, cnn.make_model)

__all__ = [
    "APPROXIMATORS",
    "ApproximatorConfig",
    "Hits",
    "ValueModel",
    "make_model",
    "register_approximator",
]
