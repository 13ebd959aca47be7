"""Afterstate values of Connect Four from the board's sum plus the pairs a move changes.

    python benchmarks/incremental_values.py [--batch-sizes 256 4096] [--seconds 2] [--repeats 3]

The TD step values every move's afterstate by summing all 140 tuple-symmetry weights of
GBG's 70 8-tuples with mirror symmetry (`current`: the afterstate's indices are the board's
plus `ntuple.index_shift`, then 7 x 140 gathers). A move changes two cells (the stone and the
cell above it), which lie in at most 70 of the 140 pairs (39 on average), so V(a) =
tanh(S + sum over the changed pairs of (w_new - w_old)) reads fewer weights (`incremental`:
the board's 140 weights once, then 70 slots per move from a static table of the pairs of
the stone's cell and the one above, padding masked). Both run on batches of random positions
(4-27 random moves from the start, 24 different batches per scan, so nothing is invariant
across the loop) with random weights; the table gives microseconds per batch of B boards
(all 7 moves valued), the ratio current / incremental (above 1: incremental is faster), and
the largest difference of the two values over the legal moves of all 24 batches, which hold
positions with full columns and ended games.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import core, registry
from jaxgames.approximators import ntuple


def _network():
    game = registry.make("connect_four")
    spec = game.board_spec
    net = ntuple.make_ntuple(spec, ntuple.tuple_set("gbg-c4-70"), 2, tcl="exponential")
    pairs, cells, cols = net.num_pairs, spec.num_cells, 7
    member = net.cell_place[:-1] != 0
    lists = [[] for _ in range(cells + 1)]
    for s in range(cells):
        m = member[s] | (member[s + cols] if s + cols < cells else False)
        lists[s] = list(np.nonzero(m)[0])
    width = max(len(one) for one in lists)
    union = np.full((cells + 1, width), pairs, np.int32)
    for s, one in enumerate(lists):
        union[s, : len(one)] = one
    place = np.zeros((cells + 1, pairs + 1), np.int32)
    place[:, :pairs] = net.cell_place
    rng = np.random.default_rng(0)
    w = rng.normal(0, 0.05, ntuple.num_weights(net) + 1).astype(np.float32)
    return game, net, {"w": jnp.asarray(w)}, jnp.asarray(union), jnp.asarray(place)


def _ways(game, net, params, union, place):
    spec = game.board_spec
    trash = ntuple.num_weights(net)

    def current(state):
        enc = spec.encode(state)
        idx = ntuple.indices(net, enc)
        cells, new = spec.changes(state, enc)
        shift = jax.vmap(lambda c, n: ntuple.index_shift(net, enc, c, n))(cells, new)
        after = idx[None] + shift
        return jax.vmap(lambda f: ntuple.value(net, params, state.current_player, f, 0))(after)

    def incremental(state):
        enc = spec.encode(state)
        idx = ntuple.indices(net, enc)
        player = state.current_player
        cells, new = spec.changes(state, enc)  # [A, 2]: the stone, the cell above
        padded = jnp.concatenate([enc, jnp.zeros(1, jnp.int32)])
        diff = jnp.where(cells < spec.num_cells, new - padded[cells], 0)
        w_now = params["w"][ntuple.flat_index(net, player, 0, idx)]
        total = ntuple.sum_last(w_now)
        pairs = union[cells[:, 0]]  # [A, K]
        shift = diff[:, :1] * place[cells[:, :1], pairs] + diff[:, 1:] * place[cells[:, 1:], pairs]
        idx_ext = jnp.concatenate([idx, jnp.zeros(1, jnp.int32)])
        w_ext = jnp.concatenate([w_now, jnp.zeros(1, jnp.float32)])
        real = pairs < net.num_pairs
        flat = jnp.where(real, ntuple.flat_index(net, player, 0, idx_ext[pairs] + shift), trash)
        delta = jnp.where(real, params["w"][flat] - w_ext[pairs], 0.0)
        return ntuple.squash(net.output, total + ntuple.sum_last(delta))

    return {"current": current, "incremental": incremental}


@functools.cache
def _player(game, batch: int):
    """play(key, moves): `batch` positions after `moves` random moves (games that ended stay
    as they ended), compiled once per batch size."""

    def move(_, loop):
        states, key = loop
        key, k = jax.random.split(key)
        keys = jax.random.split(k, batch)
        actions = jax.vmap(core.sample_legal)(keys, states.legal_action_mask)
        stepped = jax.vmap(game.step)(states, actions, keys)
        return jax.vmap(core.where_tree)(states.terminated, states, stepped), key

    @jax.jit
    def play(key, moves):
        states = jax.vmap(game.init)(jax.random.split(key, batch))
        return jax.lax.fori_loop(0, moves, move, (states, key))[0]

    return play


def _positions(game, batch: int, moves: int, seed: int):
    return _player(game, batch)(jax.random.key(seed), moves)


def _scan(fn):
    """A compiled loop that values every batch of a stack of batches (summing the values)."""

    def body(total, states):
        return total + jnp.sum(jax.vmap(fn)(states)), None

    return jax.jit(lambda xs: jax.lax.scan(body, 0.0, xs)[0])


def _us_per_batch(run, stack, seconds: float) -> float:
    jax.block_until_ready(run(stack))
    steps, done, start = jax.tree.leaves(stack)[0].shape[0], 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        jax.block_until_ready(run(stack))
        done += steps
    return (time.perf_counter() - start) / done * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[256, 4096])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if min(args.batch_sizes) < 1 or args.repeats < 1 or not args.seconds > 0:
        parser.error(
            f"--batch-sizes {args.batch_sizes} --repeats {args.repeats} --seconds "
            f"{args.seconds}: expected positive batch sizes, repeats and seconds"
        )
    game, net, params, union, place = _network()
    ways = _ways(game, net, params, union, place)
    print(f"device {jax.devices()[0].device_kind}; {net.num_pairs} pairs, {union.shape[1]} slots")
    for b in args.batch_sizes:
        batches = [_positions(game, b, 4 + i, 100 + i) for i in range(24)]
        stack = jax.tree.map(lambda *x: jnp.stack(x), *batches)
        got = {k: jax.jit(jax.vmap(jax.vmap(f)))(stack) for k, f in ways.items()}
        legal = stack.legal_action_mask
        diff = float(jnp.max(jnp.where(legal, jnp.abs(got["current"] - got["incremental"]), 0)))
        print(
            f"B = {b}: {int(legal.sum())} legal moves compared, "
            f"{int((~legal).any(-1).sum())} of {legal.shape[0] * b} positions with a move "
            f"illegal, {int(stack.terminated.sum())} ended"
        )
        print("| B | repeat | current us | incremental us | ratio | max diff |")
        print("|---:|---:|---:|---:|---:|---:|")
        runs = {k: _scan(f) for k, f in ways.items()}
        for rep in range(args.repeats):
            t = {k: _us_per_batch(run, stack, args.seconds) for k, run in runs.items()}
            ratio = t["current"] / t["incremental"]
            print(
                f"| {b} | {rep} | {t['current']:.0f} | {t['incremental']:.0f} | {ratio:.2f} "
                f"| {diff:.1e} |"
            )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
