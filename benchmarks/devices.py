"""Data parallel training over 1, 2 and 4 devices at the same global batch: moves/s, and what
the devices send each other per step, for two layouts of the n-tuple tables.

    python benchmarks/devices.py [--preset connect4-td-farl] [--batch-size 1024]
        [--devices 1 2 4] [--seconds 10]

Each configuration runs in its own process with that many forced CPU devices
(XLA_FLAGS=--xla_force_host_platform_device_count=D), or on the real devices where the
machine has them (`--real`). Layouts:

- rows: the tables replicated on every device; each step's update rows gathered whole onto
  every device, which all apply the same update (what `jaxgames.parallel` does);
- table: the tables split over the devices by weight range (padded to a multiple of D),
  each device updating its own part, reads of another device's weights combined by XLA's
  partitioner (measured only here: training does not use it).

Prints moves/s (learning included), the ratio to one device, the collective operations in
the compiled step (from its HLO) and the bytes they move per step, and the extra time per
step against one device. On one CPU, forced devices share its cores: the total cannot grow,
and the table shows the overhead of splitting.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys

SIZES = {"f32": 4, "s32": 4, "u32": 4, "pred": 1, "f64": 8, "s64": 8, "u8": 1, "s8": 1}
COLLECTIVE = re.compile(
    r"= (\w+)\[([\d,]*)\][^ ]* "
    r"(all-gather|all-reduce|collective-permute|all-to-all|reduce-scatter)(-start)?\("
)
BIG = 100_000  # arrays longer than this are n-tuple tables


def collectives(hlo: str) -> tuple[int, int]:
    """(collective operations, bytes they produce) in a compiled program's HLO text."""
    ops = moved = 0
    for line in hlo.splitlines():
        m = COLLECTIVE.search(line)
        if m:
            ops += 1
            moved += math.prod(int(k) for k in m.group(2).split(",") if k) * SIZES.get(
                m.group(1), 4
            )
    return ops, moved


def measure(preset: str, batch: int, steps: int, seconds: float, layout: str) -> dict:
    """One configuration, on the devices this process sees."""
    import dataclasses
    import time

    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from jaxgames import parallel, presets
    from jaxgames.builders import make_learner

    d = jax.device_count()
    config = presets.load(preset)
    t = dataclasses.replace(config.train, batch_size=batch, chunk_steps=steps)
    learner = make_learner(dataclasses.replace(config, train=t))
    carry = learner.init(jax.random.key(0))
    if layout == "table":  # tables padded to a multiple of D (nothing reads the padding)
        zeros = lambda x: jnp.zeros(((-x.shape[0]) % d, *x.shape[1:]), x.dtype)
        pad = lambda x: jnp.concatenate([x, zeros(x)]) if x.ndim and x.shape[0] > BIG else x
        carry = carry._replace(
            params=jax.tree.map(pad, carry.params), scratch=jax.tree.map(pad, carry.scratch)
        )

    def split_tables(mesh, shardings):  # the "table" layout; the rest as training has it
        split = NamedSharding(mesh, P(parallel.AXIS))
        big = lambda tree, sh: jax.tree.map(
            lambda s, x: split if x.ndim and x.shape[0] > BIG else s, sh, tree
        )
        return shardings._replace(
            params=big(carry.params, shardings.params),
            scratch=big(carry.scratch, shardings.scratch),
        )

    if d == 1:
        placed, compiled = carry, learner.chunk.lower(carry).compile()
    else:
        how = split_tables if layout == "table" else None
        mesh = parallel.MeshChunk(learner, carry, jax.devices(), shardings=how)
        placed = mesh.place(carry)
        compiled = mesh.lower(placed).compile()
    chunk = compiled  # the program measured is the one compiled once here
    ops, moved = collectives(compiled.as_text())
    placed, _ = chunk(placed)  # compiled and warm
    jax.block_until_ready(placed)
    start, moves = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        before = int(placed.moves)
        placed, _ = chunk(placed)
        moves += int(placed.moves) - before
    elapsed = time.perf_counter() - start
    return {
        "devices": d,
        "layout": layout,
        "moves_per_s": moves / elapsed,
        "steps_per_s": moves / elapsed / batch,
        "collectives": ops,
        "bytes": moved,
        "platform": jax.devices()[0].platform,
        "jax": jax.__version__,
    }


def run(preset: str, batch: int, steps: int, seconds: float, devices: int, layout: str, real):
    env = dict(os.environ)
    if not real:
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
        env["JAX_PLATFORMS"] = "cpu"
    else:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, range(devices)))
    args = ["--child", preset, str(batch), str(steps), str(seconds), layout]
    done = subprocess.run(
        [sys.executable, __file__, *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"{devices} device(s), {layout}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        preset, batch, steps, seconds, layout = sys.argv[2:]
        print(json.dumps(measure(preset, int(batch), int(steps), float(seconds), layout)))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="connect4-td-farl")
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--chunk-steps", type=int, default=50)
    parser.add_argument("--devices", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--real", action="store_true", help="real devices, not forced CPU ones")
    args = parser.parse_args()
    rows = []
    for d in args.devices:
        for layout in ("rows",) if d == 1 else ("rows", "table"):
            how = (args.preset, args.batch_size, args.chunk_steps, args.seconds)
            rows.append(run(*how, d, layout, args.real))
    base = next(r for r in rows if r["devices"] == 1)
    kind = "devices" if args.real else "forced CPU devices"
    print(
        f"{args.preset}, global B = {args.batch_size}, jax {base['jax']} on {base['platform']} "
        f"({kind})"
    )
    print(
        f"{'devices':>8} {'layout':<7}{'moves/s':>12}{'x one':>8}{'collectives':>13}"
        f"{'KB/step':>10}{'extra ms/step':>15}"
    )
    for r in rows:
        extra = 1e3 / r["steps_per_s"] - 1e3 / base["steps_per_s"]
        print(
            f"{r['devices']:>8} {r['layout'] if r['devices'] > 1 else '-':<7}"
            f"{r['moves_per_s']:>12,.0f}{r['moves_per_s'] / base['moves_per_s']:>7.2f}x"
            f"{r['collectives']:>13}{r['bytes'] / 1e3:>10.1f}{extra:>15.2f}"
        )


if __name__ == "__main__":
    main()
