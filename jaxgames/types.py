"""Type aliases used across the package (in the spirit of mctx's `base.py`).

Shapes are given in docstrings: `B` is the lockstep batch, `A` the number of actions, `N` the
number of players.
"""

from __future__ import annotations

from typing import Any

import jax

Array = jax.Array
ArrayLike = jax.typing.ArrayLike  # an array or a Python scalar
PRNGKey = jax.Array  # a typed key from jax.random.key
Params = Any  # a pytree of arrays: an approximator's parameters
Features = Any  # what an approximator reads of a state (n-tuples: int32[TS] LUT indices)
Carry = Any  # a learner's training carry (a NamedTuple of arrays)


def check_choices(settings: Any) -> None:
    """Raises ValueError when a field of a settings dataclass annotated `Literal[...]` holds a
    value outside its choices (the YAML loader checks them too; this covers Python callers)."""
    import dataclasses
    import typing

    hints = typing.get_type_hints(type(settings))
    for field in dataclasses.fields(settings):
        hint = hints[field.name]
        if typing.get_origin(hint) is typing.Literal:
            value = getattr(settings, field.name)
            if value not in typing.get_args(hint):
                choices = ", ".join(map(str, typing.get_args(hint)))
                raise ValueError(f"{field.name} {value!r}; expected one of {choices}")
