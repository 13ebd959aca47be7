"""Where a lockstep training step's time goes, by throw-away variants of the step.

    python benchmarks/step_profile.py --batch-sizes 256 4096 --seconds 5

For the preset (`--preset`, default `connect4-td-farl`, a TD learner of the FARL family) at
each B it times, in moves/s after a warm-up, the whole step and variants of it with one part
taken out: the update (building the update rows and the sparse scatter: the model's update
returns the parameters unchanged, so XLA drops the rows too), the afterstate values (every
value is 0, so the LUT gathers go; play becomes random tie-breaking, games get shorter, so
it is compared per move), both, and the sub-batched update (`--sub-batch`). The share of a
part is 1 - (time per move without it) / (time per move of the whole step). What remains with
both out is the game step, the random numbers, feature bookkeeping and the driver.

`--thunks N` adds XLA's own account of the whole step: the chunk runs under
`jax.profiler.trace`, and the N compiled operations (XLA:CPU thunks: fusions, scatters, the
loops of the random-number generator) that took the most time are listed with their share of
the time of all operations; an operation's time is its own (self time: a loop's time without
the operations it ran). The trace's times include the profiler's overhead and, on two
cores, operations that ran beside each other, so the shares are what to read. Find an
operation in `jax.jit(...).lower(...).compile().as_text()` by its name.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import gzip
import json
import pathlib
import sys
import tempfile
import time

import jax
import jax.numpy as jnp

from jaxgames import presets
from jaxgames.builders import make_learner
from jaxgames.learning import farl, lockstep


def _moves_per_s(learner, model, settings, seconds: float) -> float:
    step = farl.make_step(learner.game, model, settings, learner.config.train.batch_size)
    chunk = lockstep.jit_chunk(step, 8)
    carry = learner.init(jax.random.key(0))
    for _ in range(20):  # compile and play past the first moves
        carry, _ = chunk(carry)
    jax.block_until_ready(carry)
    moves0, start = int(carry.moves), time.perf_counter()
    while time.perf_counter() - start < seconds:
        carry, _ = chunk(carry)
        jax.block_until_ready(carry.moves)
    return (int(carry.moves) - moves0) / (time.perf_counter() - start)


def self_times(events: list[dict]) -> tuple[collections.Counter, collections.Counter]:
    """Each compiled operation's self time (us) and calls, from a trace's events: on one thread
    an operation that runs inside another's event (a loop's body) is taken off the outer one's
    time, so that no microsecond is counted twice; other threads' events are not."""
    total: collections.Counter = collections.Counter()
    calls: collections.Counter = collections.Counter()
    threads: dict = collections.defaultdict(list)
    for e in events:
        name = e.get("name", "")
        # complete events of compiled operations: not the executor's own, not Python frames
        if e.get("ph") == "X" and not name.startswith(("$", "ThunkExecutor", "Slinky")):
            threads[e.get("pid"), e.get("tid")].append(e)
    for ops in threads.values():
        open_: list = []  # the events that enclose the current one, innermost last
        for e in sorted(ops, key=lambda e: (e["ts"], -e["dur"])):
            while open_ and open_[-1]["ts"] + open_[-1]["dur"] <= e["ts"]:
                open_.pop()
            if open_:
                total[open_[-1]["name"]] -= e["dur"]
            total[e["name"]] += e["dur"]
            calls[e["name"]] += 1
            open_.append(e)
    return total, calls


def _thunks(learner, top: int, chunks: int = 5) -> None:
    """The `top` compiled operations of the whole step by self time, from a profiler trace."""
    carry = learner.init(jax.random.key(0))
    for _ in range(20):
        carry, _ = learner.chunk(carry)
    jax.block_until_ready(carry)
    moves0 = int(carry.moves)
    with tempfile.TemporaryDirectory() as folder:
        with jax.profiler.trace(folder, create_perfetto_trace=True):
            for _ in range(chunks):
                carry, _ = learner.chunk(carry)
            jax.block_until_ready(carry)
        trace = next(pathlib.Path(folder).rglob("*.trace.json.gz"))
        events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    total, calls = self_times(events)
    moves = int(carry.moves) - moves0
    every = sum(total.values())
    print(f"  compiled operations of {chunks} chunks, {every / 1e3:,.0f} ms in all")
    print(f"  {'operation':<34}{'ms':>8}{'calls':>7}{'share':>8}{'ns/move':>9}")
    for name, us in total.most_common(top):
        print(
            f"  {name[:34]:<34}{us / 1e3:>8.1f}{calls[name]:>7}{us / every:>8.1%}"
            f"{us * 1e3 / moves:>9.0f}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=sys.argv[0], description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="connect4-td-farl")
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[256, 4096])
    parser.add_argument("--sub-batch", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--thunks", type=int, default=0, help="list the N costliest operations")
    args = parser.parse_args(argv)
    base = presets.load(args.preset)
    print(f"{args.preset}, jax {jax.__version__} on {jax.devices()[0].device_kind}")
    print(f"{'B':>6}  {'variant':<34}{'moves/s':>10}{'us/move':>9}{'share':>8}")
    for b in args.batch_sizes:
        config = dataclasses.replace(base, train=dataclasses.replace(base.train, batch_size=b))
        learner = make_learner(config, with_chunk=False)
        model, settings = learner.model, learner.settings
        no_update = dataclasses.replace(model, update=lambda p, s, hits, alpha: (p, s))
        no_values = dataclasses.replace(model, value=lambda p, player, f, a: jnp.float32(0))
        neither = dataclasses.replace(no_update, value=no_values.value)
        variants = [
            ("whole step", model, settings),
            ("without the update (rows, scatter)", no_update, settings),
            ("without the afterstate values", no_values, settings),
            ("without both", neither, settings),
        ]
        if 0 < args.sub_batch < b:
            grouped = dataclasses.replace(settings, sub_batch=args.sub_batch)
            variants.append((f"whole step, sub_batch {args.sub_batch}", model, grouped))
        whole = None
        for name, m, s in variants:
            rate = _moves_per_s(learner, m, s, args.seconds)
            whole = whole or rate
            share = f"{1.0 - whole / rate:.1%}" if name.startswith("without") else "-"
            print(f"{b:>6}  {name:<34}{rate:>10,.0f}{1e6 / rate:>9.2f}{share:>8}", flush=True)
        if args.thunks:
            _thunks(make_learner(config), args.thunks)


if __name__ == "__main__":
    main()
