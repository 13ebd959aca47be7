"""The n-tuple update alone, this checkout's against another checkout's, in one process.

    python benchmarks/ntuple_update.py --against /path/to/other/checkout [--rows 512]

Times `jaxgames.approximators.ntuple.update` (jitted, tables donated, so it runs in place as in
training) on `--rows` update rows of Connect Four positions from random play, read through
connect4-td-farl's network (GBG's 70 8-tuples, mirror symmetry, TCL, `combine: sequential`),
80% of the rows valid. The two versions run in alternating rounds of `--calls` updates each,
so that a machine whose speed drifts slows both alike; the table gives the minimum and the
median microseconds per update over the rounds and their ratio, and whether both versions
left the same weights and TCL accumulators bit for bit after all their calls. Without
`--against` it times this checkout's update alone. A whole training step is `jaxgames bench
learning throughput`; where the step's time goes, `benchmarks/step_profile.py`.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import pathlib
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import core, registry
from jaxgames.approximators import ntuple

MODULE = pathlib.Path("jaxgames") / "approximators" / "ntuple.py"


def _load(checkout: pathlib.Path):
    """Another checkout's n-tuple module, loaded beside ours (it imports our other modules)."""
    path = checkout / MODULE
    if not path.is_file():
        raise SystemExit(f"--against {checkout}: no {MODULE} there; expected a jaxgames checkout")
    spec = importlib.util.spec_from_file_location("ntuple_against", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _positions(game, rows: int, key: jax.Array):
    """`rows` states after 0-29 random moves (a game that ends stays at its last state)."""

    def one(k):
        k, n_key = jax.random.split(k)

        def move(_, carry):
            s, k = carry
            k, pick = jax.random.split(k)
            nxt = game.step(s, core.sample_legal(pick, s.legal_action_mask))
            return core.where_tree(nxt.terminated, s, nxt), k

        steps = jax.random.randint(n_key, (), 0, 30)
        return jax.lax.fori_loop(0, steps, move, (game.init(k), k))[0]

    return jax.vmap(one)(jax.random.split(key, rows))


def check_counts(parser: argparse.ArgumentParser, args, names) -> None:
    """A usage error naming the first of `names` whose value is below one."""
    for name in names:
        if getattr(args, name) < 1:
            parser.error(f"--{name} {getattr(args, name)}: expected a positive count")


def connect_four_network():
    """(game, net): Connect Four and connect4-td-farl's network (GBG's 70 8-tuples, mirror
    symmetry, TCL)."""
    game = registry.make("connect_four")
    net = ntuple.make_ntuple(
        game.board_spec, ntuple.tuple_set("gbg-c4-70"), 2, symmetries=True, tcl="exponential"
    )
    return game, net


def alternate(fns: dict, carries: dict, rounds: int, calls: int) -> tuple[dict, dict]:
    """Times each `fns[name](*carry)` in alternating rounds of `calls` calls, so that a machine
    whose speed drifts slows every version alike. Returns ({name: microseconds per call, one
    entry per round}, the carries after the last round)."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    carries = dict(carries)
    for _ in range(rounds):
        for name, fn in fns.items():
            carry = carries[name]
            start = time.perf_counter()
            for _ in range(calls):
                carry = fn(*carry)
            carries[name] = jax.block_until_ready(carry)
            times[name].append((time.perf_counter() - start) / calls * 1e6)
    return times, carries


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=pathlib.Path, help="another jaxgames checkout")
    parser.add_argument("--rows", type=int, default=512, help="update rows per call")
    parser.add_argument("--rounds", type=int, default=10, help="timed rounds per version")
    parser.add_argument("--calls", type=int, default=50, help="updates per round")
    args = parser.parse_args(argv)
    check_counts(parser, args, ("rows", "rounds", "calls"))
    game, net = connect_four_network()
    rng = np.random.default_rng(0)
    states = _positions(game, args.rows, jax.random.key(0))
    idx = jax.vmap(lambda s: ntuple.indices(net, game.board_spec.encode(s)))(states)
    hits = ntuple.Hits(
        jnp.asarray(rng.integers(0, 2, args.rows), jnp.int32),
        jnp.zeros(args.rows, jnp.int32),
        idx,
        jnp.asarray(rng.normal(size=args.rows) * 0.1, jnp.float32),
        jnp.asarray(rng.random(args.rows) < 0.8),
        gain=jnp.ones(args.rows),
    )
    versions = {"this checkout": ntuple}
    if args.against is not None:
        versions[f"--against {args.against}"] = _load(args.against)

    def jitted(module):
        @functools.partial(jax.jit, donate_argnums=(0, 1))
        def update(params, counts):
            return module.update(net, params, hits, jnp.float32(0.5), counts)

        return update

    updates = {name: jitted(module) for name, module in versions.items()}
    carries = {}
    for name, update in updates.items():  # each version's own scratch (its dtype may differ)
        carries[name] = update(ntuple.init(net), versions[name].init_counts(net))  # compiles
        jax.block_until_ready(carries[name])
    times, carries = alternate(updates, carries, args.rounds, args.calls)
    print(
        f"n-tuple update, {args.rows} Connect Four rows, jax {jax.__version__} on "
        f"{jax.default_backend()}, {args.rounds} rounds of {args.calls} calls"
    )
    print(f"{'version':<48}{'min us':>10}{'median us':>11}{'min ratio':>11}")
    first = min(times["this checkout"])
    for name, t in times.items():
        print(f"{name:<48}{min(t):>10,.0f}{np.median(t):>11,.0f}{min(t) / first:>11.3f}")
    if len(carries) == 2:
        (a, _), (b, _) = carries.values()
        same = all(bool(jnp.array_equal(a[k], b[k])) for k in a)
        calls = 1 + args.rounds * args.calls
        print(f"same weights and TCL accumulators after {calls} calls: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
