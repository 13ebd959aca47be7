"""Data parallel training: the B games of one agent split over a mesh of devices.

The lockstep step is not rewritten for devices. Its carry is placed on a one-axis mesh
(`AXIS`, "games"): the per-game fields (the learner's `LearnerDef.per_game`) split over the
devices, B / D games each, everything else (the parameters, the
counters, the key) replicated. XLA's partitioner (GSPMD) then compiles the same program for
the mesh; it computes the same function, and random numbers do not depend on how an array
is split (`jax_threefry_partitionable`, on by default), so every game sees the moves and
chance it sees on one device.

What needs communication is the update. A value model's `update(params, scratch, hits,
alpha)` receives the update rows of all B games: `gathered` wraps it so that, on a mesh, the
rows are first made whole on every device (one all-gather of M rows per update, in game
order: about 800 bytes per game for Connect Four TD-FARL) and every device then applies the
same sparse scatter-add to its own copy of the parameters: the copies never drift apart, and
no parameter-sized array is ever sent. The alternative, n-tuple tables split by weight ranges
over the devices (each device updates its own part, the per-board sums combined by an
all-reduce), was measured against it (benchmarks/devices.py, docs/benchmarks.md): no faster
here, and it changes the checkpoint's table shapes, so it was not adopted.

With several processes (`jax.distributed`, `jaxgames train --distributed`), a mesh over
`jax.devices()` spans them all:
`MeshChunk.place` builds the carry's global arrays from the whole carry that every process
holds, each putting its own devices' part (`global_array`).

Results agree with one device's to float32 rounding, not bit for bit: XLA:CPU orders a
reduction (a board's sum of n-tuple weights) by the shapes it compiles for, so a device's
program for B / D games values a position a last bit differently from a program for B games
(one device compiled for B / D games gives the mesh's values bit for bit). Over a long run a
last-bit difference can break a tie between equally valued moves the other way, after which
the two runs play different games.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

AXIS = "games"


def divisor_devices(
    count: int, devices: int, setting: str = "train.devices", local: bool = False
) -> list:
    """The first of the visible devices to split `count` things over (`devices`, the value
    of `setting`; 0: every visible device): the most of them whose number divides `count`.
    With several processes the visible devices are all processes' (this process's alone
    with `local`)."""
    visible = jax.local_devices() if local else jax.devices()
    if devices > len(visible):
        raise ValueError(
            f"{setting}={devices}: only {len(visible)} device(s) visible "
            f"({visible[0].platform}); expected at most {len(visible)} (0 = all)"
        )
    most = min(devices or len(visible), count)
    return visible[: max(d for d in range(1, most + 1) if count % d == 0)]


def make_mesh(devices: list) -> jax.sharding.Mesh:
    """A one-axis mesh ("games") over `devices`, its sharding left to XLA's partitioner."""
    return jax.make_mesh(
        (len(devices),), (AXIS,), devices=devices, axis_types=(jax.sharding.AxisType.Auto,)
    )


def carry_shardings(carry: Any, mesh: jax.sharding.Mesh, per_game: tuple[str, ...]) -> Any:
    """Shardings for a carry: its `per_game` fields (`LearnerDef.per_game`) split over the
    mesh by game, the rest replicated."""
    split, whole = NamedSharding(mesh, P(AXIS)), NamedSharding(mesh, P())
    return type(carry)(
        *(
            jax.tree.map(lambda _, s=split if name in per_game else whole: s, value)
            for name, value in zip(carry._fields, carry, strict=True)
        )
    )


def on_mesh() -> bool:
    """Whether the code being traced runs on a mesh with the games axis."""
    return AXIS in jax.sharding.get_abstract_mesh().axis_names


def gathered(update: Callable) -> Callable:
    """A model's `update(params, scratch, hits, alpha)` that, on a mesh, first gathers the
    update rows whole onto every device (then each applies the same update to its replica);
    off a mesh, `update` itself."""

    def update_gathered(params, scratch, hits, alpha):
        if on_mesh():
            hits = jax.lax.with_sharding_constraint(hits, P())
        return update(params, scratch, hits, alpha)

    return update_gathered


class MeshChunk:
    """A learner's training chunk compiled for a mesh over `devices`: `chunk(carry) ->
    (carry, metrics)` with the carry split as `carry_shardings` says (or as `shardings`, a
    function of the mesh and those shardings, changes them), in and out (donated)."""

    def __init__(
        self,
        learner: Any,
        example_carry: Any,
        devices: list,
        shardings: Callable[[jax.sharding.Mesh, Any], Any] | None = None,
    ):
        self.mesh = make_mesh(devices)
        self.shardings = carry_shardings(example_carry, self.mesh, learner.definition.per_game)
        if shardings is not None:
            self.shardings = shardings(self.mesh, self.shardings)
        raw = learner.chunk.__wrapped__
        self._jitted = jax.jit(
            raw, in_shardings=(self.shardings,), out_shardings=(self.shardings, None),
            donate_argnums=0,
        )  # fmt: skip

    def place(self, carry: Any) -> Any:
        """A copy of the carry on the mesh (the chunk donates it; the original stays). With
        several processes (`jax.distributed`), each holds the same whole carry and puts its
        own devices' parts of it."""
        if jax.process_count() > 1:
            return jax.tree.map(global_array, carry, self.shardings)
        # device_put may keep a buffer already on a device of the mesh: copy it first
        return jax.device_put(jax.tree.map(jnp.copy, carry), self.shardings)

    def __call__(self, carry: Any) -> Any:
        with jax.set_mesh(self.mesh):
            return self._jitted(carry)

    def lower(self, carry: Any):
        with jax.set_mesh(self.mesh):
            return self._jitted.lower(carry)


def global_array(x: Any, sharding: NamedSharding) -> jax.Array:
    """An array over a mesh that spans several processes, from the whole value that every
    process holds (each puts the parts of its own devices)."""
    if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        impl = jax.random.key_impl(x)
        data = np.asarray(jax.random.key_data(x))
        spec = P(*sharding.spec, *([None] * (data.ndim - x.ndim)))
        whole = NamedSharding(sharding.mesh, spec)
        raw = jax.make_array_from_callback(data.shape, whole, lambda index: data[index])
        return jax.random.wrap_key_data(raw, impl=impl)
    value = np.asarray(x)
    return jax.make_array_from_callback(value.shape, sharding, lambda index: value[index])


def first_device(tree: Any) -> Any:
    """A replicated tree's arrays on this process's first device (a copy of its replica)."""
    device = jax.local_devices()[0]
    copy = lambda x: jax.device_put(x.addressable_data(0), device)
    return jax.block_until_ready(jax.tree.map(copy, tree))


__all__ = [
    "AXIS",
    "MeshChunk",
    "carry_shardings",
    "divisor_devices",
    "first_device",
    "gathered",
    "make_mesh",
    "on_mesh",
]
