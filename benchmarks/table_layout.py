"""The n-tuple tables' layout: weights and TCL accumulators apart (as trained) or in one table.

    python benchmarks/table_layout.py [--batches 24] [--rounds 8] [--calls 5]

connect4-td-farl's network (GBG's 70 8-tuples, mirror symmetry, TCL, `combine: sequential`)
keeps its weights in `w: float32[N + 1]` and TCL's accumulators in `tcl: float32[N + 1, 2]`
(N = 9.2M), so an update entry touches a cache line of each. This times one step's table work
both ways: the afterstate values' gather (256 boards x 7 afterstates x 140 reads, from the
weights) and the update of 352 rows (`ntuple.update`), against the same gather and update on
one `float32[N + 1, 3]` table (w, and the two accumulators, side by side: one cache line per
entry). Each way runs `--batches` different batches of Connect Four rows from random play in
one compiled scan, the tables donated; the update reads the values first, as in a training
step, so that neither program copies its tables (the script counts the copies of a table in
each compiled program and prints them). Both ways run in alternating rounds of `--calls`
scans; the table gives the minimum and median microseconds per step and their ratio, then
whether both left the same weights and accumulators bit for bit.

The one-table update below is `ntuple.update`'s `combine="sequential"` path with invalid
entries sent to the trash slot (XLA:CPU's), rewritten for that table; the script's equality
check (run by tests/test_benchmarks.py) keeps it the same arithmetic.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.approximators import ntuple


def _ntuple_update():
    """benchmarks/ntuple_update.py, the script beside this one: its positions from random play,
    its network, its usage check and its alternating-rounds timer."""
    path = pathlib.Path(__file__).with_name("ntuple_update.py")
    spec = importlib.util.spec_from_file_location("ntuple_update_helpers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ROWS = 352  # update rows of a B = 256 step (mover and final rows)
BOARDS = 256  # boards whose 7 afterstates are valued
MOVES = 7


def _one_table_update(net, table, hits, alpha, counts):
    """`ntuple.update` (sequential, trash slot) on table[:, (w, acc0, acc1)]."""
    trash = ntuple.num_weights(net)
    m = hits.signal.shape[0]
    flat = ntuple.flat_index(net, hits.player[:, None], 0, hits.features)
    by_tuple = flat.reshape(m, len(net.tuples), net.num_symmetries)
    same = by_tuple[..., :, None] == by_tuple[..., None, :]
    earlier = jnp.tril(jnp.ones((net.num_symmetries,) * 2, bool), k=-1)
    keep = hits.valid[:, None] & ~jnp.any(same & earlier, axis=-1).reshape(flat.shape)
    reads = jnp.where(keep, jnp.sum(same, axis=-1).reshape(flat.shape), 0).astype(jnp.float32)
    flat = jnp.where(keep, flat, trash).reshape(-1)
    signal = jnp.where(keep, hits.signal[:, None], 0.0).reshape(-1)
    inb = "promise_in_bounds"
    before = counts.at[flat].get(mode=inb)
    inc = keep.reshape(-1).astype(jnp.int32) + (before < jnp.iinfo(jnp.int32).min)
    counts = counts.at[flat].add(inc, mode=inb)
    hit_count = (counts.at[flat].get(mode=inb) - before).astype(jnp.float32)
    acc = table.at[flat].get(mode=inb)
    rate = alpha * ntuple.tcl_factor(net, acc[:, 1:])
    copies = ntuple.sum_last(reads * hit_count.reshape(m, -1))
    copies = jnp.maximum(copies / jnp.maximum(ntuple.sum_last(reads), 1.0), 1.0)
    share = ntuple.sum_last(reads * rate.reshape(m, -1)) * net.step_scale
    scale = ntuple._sequential_share(share * jnp.where(hits.valid, 1.0, 0.0), copies)
    step = ((rate * net.step_scale * signal).reshape(m, -1) * scale[:, None]).reshape(-1)
    rec = jnp.stack([step, signal, jnp.abs(signal)], axis=-1) + 0.0 * acc
    return table.at[flat].add(rec, mode=inb), counts


def _table_copies(compiled_text: str, entries: int) -> int:
    """How many copy operations of a table-sized array a compiled program holds."""
    return sum(
        1 for line in compiled_text.splitlines() if " copy(" in line and f"[{entries}" in line
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=24, help="different batches per scan")
    parser.add_argument("--rounds", type=int, default=8, help="timed rounds per layout")
    parser.add_argument("--calls", type=int, default=5, help="scans per round")
    args = parser.parse_args(argv)
    helpers = _ntuple_update()
    helpers.check_counts(parser, args, ("batches", "rounds", "calls"))
    k = args.batches
    game, net = helpers.connect_four_network()
    n = ntuple.num_weights(net)
    rng = np.random.default_rng(0)
    states = helpers._positions(game, k * ROWS, jax.random.key(0))
    idx = jax.vmap(lambda s: ntuple.indices(net, game.board_spec.encode(s)))(states)
    idx = idx.reshape(k, ROWS, -1)
    player = jnp.asarray(rng.integers(0, 2, (k, ROWS)), jnp.int32)
    signal = jnp.asarray(rng.normal(size=(k, ROWS)) * 0.1, jnp.float32)
    valid = jnp.asarray(rng.random((k, ROWS)) < 0.8)
    # the values' reads: each board's 140 entries for each of 7 afterstates (the same lines,
    # as most of a move's pairs are unchanged)
    reads = ntuple.flat_index(net, player[:, :BOARDS, None], 0, idx[:, :BOARDS])
    reads = jnp.repeat(reads, MOVES, axis=1)

    def hits(i, values):  # the signal depends on the values: gather before scatter
        signal_i = signal[i] + 0.0 * jnp.sum(values)
        return ntuple.Hits(player[i], jnp.zeros(ROWS, jnp.int32), idx[i], signal_i, valid[i])

    def apart(carry, i):
        params, counts = carry
        values = ntuple.sum_last(params["w"][reads[i]])
        return ntuple.update(net, params, hits(i, values), jnp.float32(0.5), counts), None

    def together(carry, i):
        table, counts = carry
        values = ntuple.sum_last(table[reads[i], 0])
        return _one_table_update(net, table, hits(i, values), jnp.float32(0.5), counts), None

    def scanned(body):
        return jax.jit(
            lambda tables, counts: jax.lax.scan(body, (tables, counts), jnp.arange(k))[0],
            donate_argnums=(0, 1),
        )

    start = {
        "apart: w[N], tcl[N, 2]": ntuple.init(net),
        "together: [N, 3]": jnp.concatenate(
            [jnp.zeros((n + 1, 1)), jnp.full((n + 1, 2), net.tcl_init)], axis=1
        ),
    }
    runs = {"apart: w[N], tcl[N, 2]": scanned(apart), "together: [N, 3]": scanned(together)}
    carries, copies = {}, {}
    for name, run in runs.items():
        compiled = run.lower(start[name], ntuple.init_counts(net)).compile()
        copies[name] = _table_copies(compiled.as_text(), n + 1)
        carries[name] = jax.block_until_ready(run(start[name], ntuple.init_counts(net)))
    per_scan, carries = helpers.alternate(runs, carries, args.rounds, args.calls)
    times = {name: [t / k for t in ts] for name, ts in per_scan.items()}  # per step
    print(
        f"n-tuple tables' layout, {BOARDS} x {MOVES} value reads and {ROWS} update rows per "
        f"step, {k} batches, jax {jax.__version__} on {jax.default_backend()}, {args.rounds} "
        f"rounds of {args.calls} scans"
    )
    print(f"{'layout':<26}{'table copies':>13}{'min us':>9}{'median us':>11}{'min / apart':>13}")
    first = min(times["apart: w[N], tcl[N, 2]"])
    for name, t in times.items():
        print(
            f"{name:<26}{copies[name]:>13}{min(t):>9,.0f}{np.median(t):>11,.0f}"
            f"{min(t) / first:>13.3f}"
        )
    (params, _), (table, _) = carries.values()
    same = bool(jnp.array_equal(params["w"], table[:, 0])) and bool(
        jnp.array_equal(params["tcl"], table[:, 1:])
    )
    scans = 1 + args.rounds * args.calls
    print(f"same weights and TCL accumulators after {scans} scans: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
