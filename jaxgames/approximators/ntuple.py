"""n-tuple networks: lookup tables indexed by the states of a few board cells.

An n-tuple is a sequence of board cells; on a board whose cells are in states 0..P-1 it indexes
its lookup table (LUT) by those states read as a base-P number, first cell least significant.
The value of a board for player p sums the LUT entries of every tuple on every symmetric copy
of the board and squashes the sum (tanh, or identity for unbounded scores such as 2048):

    V_p(b) = sigma( sum_s sum_t LUT_p[t][index_t(sym_s(b))] )

Q-networks keep one LUT set per action; under symmetry s, action a reads the tables of the
action that a becomes on the symmetric board (GBG's symmetryActions).

Evaluation is a gather; the update (`update`) is an explicit sparse scatter-add, never a dense
gradient over the tables: every weight read by an updated board moves by
`alpha / (num_tuples * num_symmetries) * signal * tcl_factor` (GBG, Appendix A.3).

Symmetric copies of one board that read the same LUT entry change it once (GBG, Appendix A.4).

Several boards in one call (the games of a lockstep batch) are combined as GBG's sequential
updates would be, by component averaging (Censor, Gordon & Gordon 2001) with relaxation: each
board's step is scaled by (1 - (1 - r)^n) / (r n). Here r is the share of its error that one
update alone removes from the board's value: alpha / (num_tuples * num_symmetries) times the
sum of tcl_factor over the board's reads, times `Hits.gain` (sigma'(v)^2 for tanh), clipped to
1; a LUT entry that c symmetric copies of the board read moves the board's sum c times its
change, so it counts c times (without TCL, r = alpha * gain whatever the repeats). And n is
the mean, over the board's reads, of how many boards of the call read that weight: the
board's effective number of copies in the call. So a board that shares no weight with another
moves exactly as GBG's single update (n = 1); with an identity output, k copies of one board
move it exactly as k sequential updates would (with symmetric copies that share entries too);
with tanh they move its pre-activation as k updates of the linearised output would, which
agrees with k tanh updates to first order in the step (k tanh updates follow the slope as it
changes; with r k large the batch ends short of a target farther from 0 than the board's value,
and can pass one nearer to 0). Boards that overlap little add
up (r n small) and many overlapping ones with large steps approach their least-squares
compromise instead of overshooting. `combine="weight"` scales per weight instead (a weight
read by k boards moves by the mean of their changes times (1 - (1 - r)^k) / r with
r = min(1, alpha * tcl_factor)), which at large alpha averages even boards that share nothing
else; it is kept so that results measured with it reproduce. `combine="mean"` moves each
weight by the mean of its boards' changes.

Optional temporal coherence learning (TCL, Beal & Smith; GBG Appendix A.5) keeps per weight the
accumulators N (sum of recommended changes) and A (sum of their magnitudes), both starting at
`tcl_init`, and scales the step by |N|/A ("identity") or exp(beta (|N|/A - 1)) ("exponential").

Conventions: `tuple-symmetry pair` (TS) = one tuple read on one symmetric board. All functions
are unbatched and jittable; `net` is static.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import BoardSpec

Array = jax.Array
Params = dict[str, Array]

OUTPUTS = ("tanh", "identity")
TCL_MODES = ("none", "identity", "exponential")


@dataclasses.dataclass(frozen=True, eq=False)
class NTupleNet:
    """Static description of an n-tuple network (hashes by identity; a jit static argument).

    Attributes:
        num_players: one LUT set per player.
        num_outputs: 1 for a value function, num_actions for a Q-function.
        num_cells, num_cell_states: the board (P = num_cell_states).
        tuples: the cells of each tuple (lengths may differ).
        num_symmetries: S, symmetric boards summed over (1 = no symmetry).
        output: "tanh" or "identity".
        tcl: "none", "identity" or "exponential".
        tcl_beta, tcl_init: TCL settings.
        table_size: entries of one (player, output) LUT set, sum over tuples of P^len.
        ts_cells: int32[TS, n], cell read at each tuple position (padding: `num_cells`).
        ts_place: int32[TS, n], P^j of each position (0 for padding).
        ts_offset: int32[TS], start of the tuple's LUT within a LUT set.
        ts_sym: int32[TS], the symmetry of each pair.
        cell_place: int32[num_cells + 1, TS], P^j of a cell within each pair (0 if absent).
        action_sym: int32[S, num_actions], actions mapped onto each symmetric board.
    """

    num_players: int
    num_outputs: int
    num_cells: int
    num_cell_states: int
    tuples: tuple[tuple[int, ...], ...]
    num_symmetries: int
    output: str
    tcl: str
    tcl_beta: float
    tcl_init: float
    table_size: int
    ts_cells: np.ndarray
    ts_place: np.ndarray
    ts_offset: np.ndarray
    ts_sym: np.ndarray
    cell_place: np.ndarray
    action_sym: np.ndarray

    @property
    def num_pairs(self) -> int:
        return len(self.ts_offset)

    @property
    def step_scale(self) -> float:
        """1 / (num_tuples * num_symmetries): GBG's per-weight share of the step size."""
        return 1.0 / (len(self.tuples) * self.num_symmetries)


def make_ntuple(
    spec: BoardSpec,
    tuples: Sequence[Sequence[int]],
    num_players: int,
    num_outputs: int = 1,
    symmetries: bool = True,
    output: str = "tanh",
    tcl: str = "none",
    tcl_beta: float = 2.7,
    tcl_init: float = 1e-4,
) -> NTupleNet:
    """Builds an n-tuple network for a board.

    Args:
        spec: the game's BoardSpec.
        tuples: cells of each tuple (each cell once per tuple).
        num_players: number of LUT sets by player.
        num_outputs: 1 (V) or the number of actions (Q).
        symmetries: sum over all of the board's symmetries (else the board alone).
        output: "tanh" or "identity".
        tcl: temporal coherence mode, one of "none", "identity", "exponential".

    Raises:
        ValueError: empty or repeated tuples, cells off the board, unknown modes, or tables
            too large to index with int32.
    """
    if output not in OUTPUTS:
        raise ValueError(f"output={output!r}; expected one of {OUTPUTS}")
    if tcl not in TCL_MODES:
        raise ValueError(f"tcl={tcl!r}; expected one of {TCL_MODES}")
    tuples = tuple(tuple(int(c) for c in t) for t in tuples)
    if not tuples:
        raise ValueError("an n-tuple network needs at least one tuple")
    for t in tuples:
        if not t or len(set(t)) != len(t) or min(t) < 0 or max(t) >= spec.num_cells:
            raise ValueError(
                f"bad tuple {list(t)}: cells must be distinct and in [0, {spec.num_cells - 1}]"
            )
    p = spec.num_cell_states
    sizes = [p ** len(t) for t in tuples]
    table_size = sum(sizes)
    if table_size * num_players * num_outputs >= 2**31:
        raise ValueError(
            f"LUTs of {table_size * num_players * num_outputs:,} weights exceed int32 indexing; "
            "use fewer or shorter tuples"
        )
    perms = spec.symmetries if symmetries else spec.symmetries[:1]
    width = max(len(t) for t in tuples)
    pairs = [(t, s) for t in range(len(tuples)) for s in range(len(perms))]
    ts_cells = np.full((len(pairs), width), spec.num_cells, np.int32)
    ts_place = np.zeros((len(pairs), width), np.int32)
    cell_place = np.zeros((spec.num_cells + 1, len(pairs)), np.int32)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int32)
    for k, (t, s) in enumerate(pairs):
        for j, cell in enumerate(tuples[t]):
            read = perms[s][cell]  # symmetric board s shows at `cell` the board's cell `read`
            ts_cells[k, j] = read
            ts_place[k, j] = p**j
            cell_place[read, k] = p**j
    return NTupleNet(
        num_players=num_players,
        num_outputs=num_outputs,
        num_cells=spec.num_cells,
        num_cell_states=p,
        tuples=tuples,
        num_symmetries=len(perms),
        output=output,
        tcl=tcl,
        tcl_beta=float(tcl_beta),
        tcl_init=float(tcl_init),
        table_size=table_size,
        ts_cells=ts_cells,
        ts_place=ts_place,
        ts_offset=offsets[[t for t, _ in pairs]].astype(np.int32),
        ts_sym=np.array([s for _, s in pairs], np.int32),
        cell_place=cell_place,
        action_sym=np.asarray(spec.action_symmetries[: len(perms)], np.int32),
    )


def random_walk_tuples(
    neighbours: np.ndarray, num_tuples: int, length: int, key: jax.Array
) -> list[list[int]]:
    """Tuples grown by random walks over cell neighbourhoods (GBG's generateRandomWalkNTuples).

    Each walk starts on a random cell and steps to random neighbours until it has visited
    `length` distinct cells (or has tried long enough, on tiny boards). Host-side.

    Args:
        neighbours: int32[cells, K], -1 padded (BoardSpec.neighbours).
        num_tuples, length: how many tuples, and their length.
        key: PRNG key; the same key gives the same tuples.
    """
    num_cells = neighbours.shape[0]
    if not 1 <= length <= num_cells:
        raise ValueError(f"tuple length {length} must be in [1, {num_cells}]")
    max_steps = 50 * length
    starts_key, steps_key = jax.random.split(key)
    starts = np.asarray(jax.random.randint(starts_key, (num_tuples,), 0, num_cells))
    draws = np.asarray(jax.random.uniform(steps_key, (num_tuples, max_steps)))
    out = []
    for t in range(num_tuples):
        cell, seen = int(starts[t]), [int(starts[t])]
        for step in range(max_steps):
            if len(seen) == length:
                break
            near = neighbours[cell][neighbours[cell] >= 0]
            cell = int(near[min(int(draws[t, step] * len(near)), len(near) - 1)])
            if cell not in seen:
                seen.append(cell)
        out.append(seen)
    return out


def num_weights(net: NTupleNet) -> int:
    return net.num_players * net.num_outputs * net.table_size


def init(net: NTupleNet) -> Params:
    """Zero weights and, with TCL, the accumulators (N, A) = tcl_init.

    The tables are stored flat, `w: float32[num_weights + 1]` (index with `flat_index`) and
    `tcl: float32[num_weights + 1, 2]`, so that XLA updates them in place. The last entry is a
    trash slot: updates that must not happen are sent there, which is much cheaper than
    letting a scatter drop out-of-range indices. It is never read as a weight.
    """
    params = {"w": jnp.zeros(num_weights(net) + 1, jnp.float32)}
    if net.tcl != "none":
        params["tcl"] = jnp.full((num_weights(net) + 1, 2), net.tcl_init, jnp.float32)
    return params


def init_counts(net: NTupleNet) -> Array:
    """Zeroed scratch space for `update` (int32[num_weights + 1])."""
    return jnp.zeros(num_weights(net) + 1, jnp.int32)


def weights(net: NTupleNet, params: Params) -> Array:
    """The weights as float32[num_players, num_outputs, table_size] (for inspection)."""
    return params["w"][:-1].reshape(net.num_players, net.num_outputs, net.table_size)


EXACT_FLOAT32 = 2**24  # integers up to here are exact in float32


def indices(net: NTupleNet, encoded: Array) -> Array:
    """int32[TS]: the LUT index (within a LUT set) of every tuple-symmetry pair.

    The index is linear in the cell states, `encoded @ cell_place`, and is computed as that
    product in float32 (at full precision, so exact) whenever no tuple's index can reach 2^24;
    longer tuples gather their cells instead. The product is also much faster on XLA:CPU when
    the boards come straight out of a game step (the fused gather recomputed the step's
    outputs: Othello, 65 afterstates x 800 pairs, 500 ms -> 45 ms for 256 boards).

    Args:
        encoded: int[num_cells] cell states (BoardSpec.encode).
    """
    if net.num_cell_states ** max(len(t) for t in net.tuples) <= EXACT_FLOAT32:
        place = jnp.asarray(net.cell_place[:-1], jnp.float32)
        index = jnp.matmul(encoded.astype(jnp.float32), place, precision="highest")
        return index.astype(jnp.int32) + net.ts_offset
    padded = jnp.concatenate([encoded.astype(jnp.int32), jnp.zeros(1, jnp.int32)])
    return jnp.sum(padded[net.ts_cells] * net.ts_place, axis=-1) + net.ts_offset


def index_shift(net: NTupleNet, encoded: Array, cells: Array, new: Array) -> Array:
    """int32[TS]: how `indices` changes when `cells` take the states `new` (the rest unchanged).

    Args:
        encoded: int[num_cells], the board before the change.
        cells: int32[C] changed cells (`num_cells` = no change).
        new: int32[C] their new states.
    """
    padded = jnp.concatenate([encoded.astype(jnp.int32), jnp.zeros(1, jnp.int32)])
    diff = jnp.where(cells < net.num_cells, new - padded[cells], 0)
    return jnp.sum(diff[:, None] * jnp.asarray(net.cell_place)[cells], axis=0)


def _squash(net: NTupleNet, total: Array) -> Array:
    return jnp.tanh(total) if net.output == "tanh" else total


def _outputs(net: NTupleNet, action: Array) -> Array:
    """int32[TS]: the LUT set each pair reads for `action` (0 for value networks)."""
    if net.num_outputs == 1:
        return jnp.zeros(net.num_pairs, jnp.int32)
    return jnp.asarray(net.action_sym)[net.ts_sym, action]


def flat_index(net: NTupleNet, player: Array, outputs: Array, idx: Array) -> Array:
    """Index into the flat `params["w"]` of LUT entries `idx` of (player, outputs)."""
    return (player * net.num_outputs + outputs) * net.table_size + idx


def value(net: NTupleNet, params: Params, player: Array, idx: Array, action: Array = 0) -> Array:
    """V_p(board), or Q_p(board, action) for Q-networks (unbatched).

    Args:
        params: the network's params.
        player: int32, whose LUTs to read.
        idx: int32[TS] (`indices` of the board).
        action: int32, the action (Q-networks only).

    Returns:
        float32 scalar.
    """
    flat = flat_index(net, player, _outputs(net, action), idx)
    return _squash(net, jnp.sum(params["w"][flat]))


def q_values(net: NTupleNet, params: Params, player: Array, idx: Array) -> Array:
    """float32[num_outputs]: Q_p(board, a) for every action a (unbatched)."""
    actions = jnp.arange(net.num_outputs)
    return jax.vmap(lambda a: value(net, params, player, idx, a))(actions)


class Hits(NamedTuple):
    """M update requests, each for everything one board's value depends on.

    Attributes:
        player: int32[M], whose parameters.
        action: int32[M], the Q output (0 for value networks).
        features: [M, ...] the boards' features (for n-tuples: int32[M, TS] `indices`).
        signal: float32[M], the recommended change before step size: delta * sigma' * lambda^k.
        valid: bool[M]; invalid rows change nothing.
        gain: float32[M] or None (= 1): the share of its error that one request, alone and at
            step size 1, removes from its own board's output: sigma'(v)^2 (times lambda^k for
            an eligibility row). The n-tuple update's "sequential" combine uses it.
        lead: int32[M] or None (= 0): the offset (<= 0) from a request to the request whose
            update it is part of: 0 for a board's own request, -k for the k-th board of its
            eligibility history, which moves with the same delta in the same sequential
            update and so shares that board's combine scale.
    """

    player: Array
    action: Array
    features: Array
    signal: Array
    valid: Array
    gain: Array | None = None
    lead: Array | None = None


def tcl_factor(net: NTupleNet, acc: Array) -> Array:
    """Per-weight TCL step factor from accumulators `acc[..., (N, A)]`."""
    ratio = jnp.abs(acc[..., 0]) / acc[..., 1]
    return jnp.exp(net.tcl_beta * (ratio - 1.0)) if net.tcl == "exponential" else ratio


COMBINE = ("sequential", "weight", "mean")


def _sequential_share(r: Array, n: Array) -> Array:
    """(1 - (1 - r)^n) / (r n): what n sequential updates of relative step r achieve, per update."""
    r = jnp.clip(r, 1e-6, 1.0 - 1e-7)
    return -jnp.expm1(n * jnp.log1p(-r)) / (r * n)


def update(
    net: NTupleNet,
    params: Params,
    hits: Hits,
    alpha: Array,
    counts: Array,
    combine: str = "sequential",
) -> tuple[Params, Array]:
    """Applies M update requests as one sparse scatter-add.

    Every weight read by a valid board moves by `alpha * step_scale * signal * tcl_factor`,
    scaled per board by (1 - (1 - r)^n) / (r n) for `combine="sequential"`, per weight for
    "weight", or divided by its number of boards for "mean" (see the module docstring). TCL
    accumulators add every board's signal once.

    Args:
        params: network params.
        hits: the requests (leading axis M).
        alpha: the global step size.
        counts: int32[num weights], all zero: scratch space for hit counts, returned zeroed.
        combine: "sequential", "weight" or "mean".

    Returns:
        (new params, counts) with counts zero again.
    """
    if combine not in COMBINE:
        raise ValueError(f"combine {combine!r}; expected one of {', '.join(COMBINE)}")
    trash = num_weights(net)
    m = hits.signal.shape[0]
    outputs = jax.vmap(lambda a: _outputs(net, a))(hits.action)  # [M, TS]
    flat = flat_index(net, hits.player[:, None], outputs, hits.features)
    # Symmetric copies of one board that read the same entry of a tuple count once.
    by_tuple = flat.reshape(m, len(net.tuples), net.num_symmetries)
    same = by_tuple[..., :, None] == by_tuple[..., None, :]
    earlier = jnp.tril(jnp.ones((net.num_symmetries,) * 2, bool), k=-1)
    repeat = jnp.any(same & earlier, axis=-1)
    keep = hits.valid[:, None] & ~repeat.reshape(flat.shape)  # [M, TS]
    # reads: how many symmetric copies of its board read a kept pair's entry (itself too)
    reads = jnp.where(keep, jnp.sum(same, axis=-1).reshape(flat.shape), 0).astype(jnp.float32)
    flat = jnp.where(keep, flat, trash).reshape(-1)
    signal = jnp.where(keep, hits.signal[:, None], 0.0).reshape(-1)
    # Every scatter below takes values computed from a gather of the same table, so XLA must run
    # the gather first and can update the (large) tables in place instead of copying them.
    inbounds = "promise_in_bounds"
    row = jnp.arange(m)
    leader = row if hits.lead is None else row + hits.lead
    # "sequential" counts updates on a weight (their leading boards), the others every board.
    counted = keep & (leader == row)[:, None] if combine == "sequential" else keep
    inc = counted.reshape(-1).astype(jnp.int32)
    counts = counts.at[flat].add(inc, mode=inbounds)
    hits_int = counts.at[flat].get(mode=inbounds)
    hit_count = hits_int.astype(jnp.float32)
    rate = jnp.full_like(signal, alpha)
    new = dict(params)
    if net.tcl != "none":
        acc = params["tcl"].at[flat].get(mode=inbounds)
        rate = rate * tcl_factor(net, acc)
        rec = jnp.stack([signal, jnp.abs(signal)], axis=-1) + 0.0 * acc
        new["tcl"] = params["tcl"].at[flat].add(rec, mode=inbounds)
    step = rate * net.step_scale * signal
    if combine == "mean":
        step = step / jnp.maximum(hit_count, 1.0)
    elif combine == "weight":  # r per weight
        step = step * _sequential_share(rate, jnp.maximum(hit_count, 1.0))
    else:
        gain = jnp.ones(m) if hits.gain is None else hits.gain
        gain = jnp.where(hits.valid, gain, 0.0)
        # An entry read by c symmetric copies of a board moves the board's sum c times its
        # change, so both the relative step r and the mean number of boards per weight n
        # count each kept pair c times (every read of the board, as a single update sees it).
        read = jnp.where(counted, reads, 0.0)
        copies = jnp.sum(read * hit_count.reshape(m, -1), axis=-1)
        copies = jnp.maximum(copies / jnp.maximum(jnp.sum(read, axis=-1), 1.0), 1.0)
        share = jnp.sum(reads * rate.reshape(m, -1), axis=-1) * net.step_scale
        scale = _sequential_share(share * gain, copies)  # r per board
        step = (step.reshape(m, -1) * scale[leader][:, None]).reshape(-1)
    new["w"] = params["w"].at[flat].add(step, mode=inbounds)
    # min(hits, inc) = inc, written through the gather so that the reset runs in place too.
    return new, counts.at[flat].add(-jnp.minimum(hits_int, inc), mode=inbounds)


def active_fraction(net: NTupleNet, params: Params) -> Array:
    """float32[num_players]: share of each player's weights that are not zero (GBG's measure)."""
    return jnp.mean((weights(net, params) != 0).reshape(net.num_players, -1), axis=-1)
