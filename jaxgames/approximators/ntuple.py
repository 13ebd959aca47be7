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
import functools
import importlib.resources
import json
import typing
from collections.abc import Sequence
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.approximators.base import (
    OUTPUTS,
    ApproximatorConfig,
    Hits,
    ValueModel,
    afterstates_by_features,
    squash,
)
from jaxgames.core import BoardSpec, Game
from jaxgames.types import Array, ArrayLike, PRNGKey

Params = dict[str, Array]

TCL_MODES = ("none", "identity", "exponential")
COMBINE = ("sequential", "weight", "mean")


@dataclasses.dataclass(frozen=True)
class NTupleConfig(ApproximatorConfig):
    """An n-tuple network (`approximator: {kind: ntuple, ...}`).

    tuple_sets: named tuple sets shipped with the package (`tuple_sets()` lists them, e.g.
        "gbg-c4-70", GBG's 70 Connect Four 8-tuples), taken first.
    tuples: explicit tuples (lists of cells), taken next.
    num_tuples, tuple_length, tuple_seed: then `num_tuples` random walks of `tuple_length`
        cells over the board's neighbourhoods, drawn with `tuple_seed` (0 tuples: none).
    symmetries: sum over the board's symmetries.
    output: "tanh" or "identity".
    tcl: temporal coherence learning: "none", "identity" or "exponential" (beta `tcl_beta`,
        accumulators start at `tcl_init`).
    combine: how hits of several games on one weight in one lockstep step combine:
        "sequential" (like that many sequential updates, by component averaging), "weight"
        (per weight; kept so that results measured with it reproduce) or "mean".
    """

    kind: Literal["ntuple"] = "ntuple"
    tuple_sets: tuple[str, ...] = ()
    tuples: tuple[tuple[int, ...], ...] | None = None
    num_tuples: int = 0
    tuple_length: int = 0
    tuple_seed: int = 0
    symmetries: bool = True
    tcl: Literal["none", "identity", "exponential"] = "none"
    tcl_beta: float = 2.7
    tcl_init: float = 1e-4
    combine: Literal["sequential", "weight", "mean"] = "sequential"

    def has_tuples(self) -> bool:
        """Whether any tuple is configured (a network needs one; `check_config` says so)."""
        return bool(self.tuple_sets or self.tuples or self.num_tuples)

    def __post_init__(self):
        super().__post_init__()
        unknown = [name for name in self.tuple_sets if name not in tuple_sets()]
        if unknown:
            raise ValueError(
                f"tuple set(s) {', '.join(map(repr, unknown))}; known sets: "
                f"{', '.join(tuple_sets())}"
            )
        if self.num_tuples < 0 or (self.num_tuples and self.tuple_length < 1):
            raise ValueError(
                f"num_tuples={self.num_tuples}, tuple_length={self.tuple_length}: random walks "
                "need num_tuples >= 0 and tuple_length >= 1"
            )


@functools.cache
def _tuple_set_file() -> dict:
    data = importlib.resources.files("jaxgames.data").joinpath("tuple_sets.json")
    return json.loads(data.read_text())


def tuple_sets() -> dict[str, str]:
    """The named tuple sets shipped with the package: name -> description."""
    return {name: entry["description"] for name, entry in _tuple_set_file().items()}


def tuple_set(name: str) -> list[list[int]]:
    """The tuples of a named set (raises ValueError for an unknown name)."""
    if name not in _tuple_set_file():
        raise ValueError(f"tuple set {name!r}; known sets: {', '.join(tuple_sets())}")
    return [list(t) for t in _tuple_set_file()[name]["tuples"]]


def build_tuples(config: NTupleConfig, spec: BoardSpec) -> list[list[int]]:
    """The configured tuples: named sets, then explicit tuples, then seeded random walks."""
    out = [t for name in config.tuple_sets for t in tuple_set(name)]
    out += [list(t) for t in config.tuples or ()]
    if config.num_tuples:
        key = jax.random.key(config.tuple_seed)
        out += random_walk_tuples(spec.neighbours, config.num_tuples, config.tuple_length, key)
    return out


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
    cells = tuple(tuple(int(c) for c in t) for t in tuples)
    if not cells:
        raise ValueError("an n-tuple network needs at least one tuple")
    for one in cells:
        if not one or len(set(one)) != len(one) or min(one) < 0 or max(one) >= spec.num_cells:
            raise ValueError(
                f"bad tuple {list(one)}: cells must be distinct and in [0, {spec.num_cells - 1}]"
            )
    p = spec.num_cell_states
    sizes = [p ** len(t) for t in cells]
    table_size = sum(sizes)
    if table_size * num_players * num_outputs >= 2**31:
        raise ValueError(
            f"LUTs of {table_size * num_players * num_outputs:,} weights exceed int32 indexing; "
            "use fewer or shorter tuples"
        )
    perms = spec.symmetries if symmetries else spec.symmetries[:1]
    width = max(len(t) for t in cells)
    pairs = [(t, s) for t in range(len(cells)) for s in range(len(perms))]
    ts_cells = np.full((len(pairs), width), spec.num_cells, np.int32)
    ts_place = np.zeros((len(pairs), width), np.int32)
    cell_place = np.zeros((spec.num_cells + 1, len(pairs)), np.int32)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int32)
    for k, (t, s) in enumerate(pairs):
        for j, cell in enumerate(cells[t]):
            read = perms[s][cell]  # symmetric board s shows at `cell` the board's cell `read`
            ts_cells[k, j] = read
            ts_place[k, j] = p**j
            cell_place[read, k] = p**j
    return NTupleNet(
        num_players=num_players,
        num_outputs=num_outputs,
        num_cells=spec.num_cells,
        num_cell_states=p,
        tuples=cells,
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
    trash slot: on XLA:CPU updates that must not happen are sent there, which is cheaper than
    letting a scatter drop out-of-range indices; elsewhere they are dropped (see `update`). It
    is never read as a weight.
    """
    params = {"w": jnp.zeros(num_weights(net) + 1, jnp.float32)}
    if net.tcl != "none":
        params["tcl"] = jnp.full((num_weights(net) + 1, 2), net.tcl_init, jnp.float32)
    return params


def init_counts(net: NTupleNet) -> Array:
    """Scratch space for `update` (int32[num_weights + 1]): a running tally of hits per weight,
    started at zero; `update` reads only what one call adds to it, so any start works."""
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


def _outputs(net: NTupleNet, action: ArrayLike) -> Array:
    """int32[TS]: the LUT set each pair reads for `action` (0 for value networks)."""
    if net.num_outputs == 1:
        return jnp.zeros(net.num_pairs, jnp.int32)
    return jnp.asarray(net.action_sym)[net.ts_sym, action]


def flat_index(net: NTupleNet, player: ArrayLike, outputs: ArrayLike, idx: Array) -> Array:
    """Index into the flat `params["w"]` of LUT entries `idx` of (player, outputs)."""
    return typing.cast(Array, (player * net.num_outputs + outputs) * net.table_size + idx)


def sum_last(x: Array) -> Array:
    """The sum over the last axis of float32 `x`, as a product with a vector of ones.

    XLA:CPU hands a plain reduction of a few hundred rows of 140 to YNNPACK, which ran it 3-4x
    slower than this matrix-vector product (docs/benchmarks.md, "Row sums as products").
    `precision="highest"` keeps float32 on GPUs, whose default for a float32 product is
    TF32 on recent NVIDIA chips."""
    ones = jnp.ones(x.shape[-1], x.dtype)
    return jnp.matmul(x, ones, precision="highest")


def value(
    net: NTupleNet, params: Params, player: ArrayLike, idx: Array, action: ArrayLike = 0
) -> Array:
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
    return squash(net.output, sum_last(params["w"][flat]))


def q_values(net: NTupleNet, params: Params, player: Array, idx: Array) -> Array:
    """float32[num_outputs]: Q_p(board, a) for every action a (unbatched)."""
    actions = jnp.arange(net.num_outputs)
    return jax.vmap(lambda a: value(net, params, player, idx, a))(actions)


def tcl_factor(net: NTupleNet, acc: Array) -> Array:
    """Per-weight TCL step factor from accumulators `acc[..., (N, A)]`."""
    ratio = jnp.abs(acc[..., 0]) / acc[..., 1]
    return jnp.exp(net.tcl_beta * (ratio - 1.0)) if net.tcl == "exponential" else ratio


def _sequential_share(r: Array, n: Array) -> Array:
    """(1 - (1 - r)^n) / (r n): what n sequential updates of relative step r achieve, per update."""
    r = jnp.clip(r, 1e-6, 1.0 - 1e-7)
    return -jnp.expm1(n * jnp.log1p(-r)) / (r * n)


INVALID = ("trash", "drop")


def invalid_entries() -> str:
    """How `update` disposes of the entries that must not change a weight on this backend:
    "trash" on XLA:CPU (all sent to the trash slot: an in-bounds scatter, the fastest there),
    "drop" elsewhere (an out-of-range index that the scatter skips: on a GPU, a million
    entries of a large batch sent to one slot would serialise as atomic adds on one address).
    Both give the same weights bit for bit."""
    return "trash" if jax.default_backend() == "cpu" else "drop"


def update(
    net: NTupleNet,
    params: Params,
    hits: Hits,
    alpha: Array,
    counts: Array,
    combine: str = "sequential",
    invalid: str | None = None,
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
        counts: int32[num weights + 1], scratch space: a running tally of each weight's hits
            (`init_counts`; it wraps around at 2^31, harmlessly). Only what this call adds is
            read, as the tally after the call minus the tally before it, so the tally needs no
            reset (one scatter-add fewer) and any starting tally gives the same weights.
        combine: "sequential", "weight" or "mean".
        invalid: where entries that must not change anything (invalid boards, a symmetric
            copy's repeat of an entry) go: "trash" (the trash slot) or "drop" (skipped by the
            scatter); None: `invalid_entries()`, the backend's faster choice.

    Returns:
        (new params, counts), the tally with this call's hits added.
    """
    if combine not in COMBINE:
        raise ValueError(f"combine {combine!r}; expected one of {', '.join(COMBINE)}")
    invalid = invalid_entries() if invalid is None else invalid
    if invalid not in INVALID:
        raise ValueError(f"invalid {invalid!r}; expected one of {', '.join(INVALID)}")
    # "drop": one past the trash slot, out of range, so every scatter and gather below skips it
    trash = num_weights(net) + (invalid == "drop")
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
    inbounds = "promise_in_bounds" if invalid == "trash" else "drop"

    def gather(table: Array, fill_value) -> Array:  # a dropped entry reads fill_value
        if invalid == "trash":
            return table.at[flat].get(mode=inbounds)
        return table.at[flat].get(mode="fill", fill_value=fill_value)

    row = jnp.arange(m)
    leader = row if hits.lead is None else row + hits.lead
    # "sequential" counts updates on a weight (their leading boards), the others every board.
    counted = keep & (leader == row)[:, None] if combine == "sequential" else keep
    inc = counted.reshape(-1).astype(jnp.int32)
    # The tally before and after this call's hits. The increments depend on the first read (a
    # comparison that is always false), so XLA reads before it scatters, in place.
    before = gather(counts, 0)
    inc = inc + (before < jnp.iinfo(jnp.int32).min).astype(jnp.int32)
    counts = counts.at[flat].add(inc, mode=inbounds)
    hit_count = (gather(counts, 0) - before).astype(jnp.float32)
    rate = jnp.full_like(signal, alpha)
    new = dict(params)
    if net.tcl != "none":
        acc = gather(params["tcl"], net.tcl_init)  # dropped: a finite factor, zero signal
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
        copies = sum_last(read * hit_count.reshape(m, -1))
        copies = jnp.maximum(copies / jnp.maximum(sum_last(read), 1.0), 1.0)
        share = sum_last(reads * rate.reshape(m, -1)) * net.step_scale
        scale = _sequential_share(share * gain, copies)  # r per board
        step = (step.reshape(m, -1) * scale[leader][:, None]).reshape(-1)
    new["w"] = params["w"].at[flat].add(step, mode=inbounds)
    return new, counts


def active_fraction(net: NTupleNet, params: Params) -> Array:
    """float32[num_players]: share of each player's weights that are not zero (GBG's measure)."""
    return jnp.mean((weights(net, params) != 0).reshape(net.num_players, -1), axis=-1)


def model(game: Game, net: NTupleNet, combine: str = "sequential") -> ValueModel:
    """A ValueModel over an n-tuple (or tabular) network; `combine` as in `update`."""
    spec = game.board_spec

    def features(state) -> Array:
        return indices(net, spec.encode(state))

    incremental = spec.changes is not None and not game.stochastic
    if incremental:

        def afterstate_features(state, idx: Array) -> Array:
            encoded = spec.encode(state)
            cells, new = spec.changes(state, encoded)
            shift = jax.vmap(lambda c, n: index_shift(net, encoded, c, n))(cells, new)
            return idx[None, :] + shift

    else:
        afterstate_features = afterstates_by_features(game, features)

    def init_model(key: PRNGKey) -> Params:
        del key
        return init(net)

    def update_model(params, scratch, hits, alpha):
        return update(net, params, hits, alpha, scratch, combine)

    return ValueModel(
        num_players=net.num_players,
        num_outputs=net.num_outputs,
        output=net.output,
        init=init_model,
        init_scratch=lambda params: init_counts(net),
        features=features,
        afterstate_features=afterstate_features,
        value=lambda params, player, idx, action: value(net, params, player, idx, action),
        update=update_model,
        describe=functools.partial(describe, net, combine),
        incremental=incremental,
        net=net,
    )


def describe(net: NTupleNet, combine: str, params: Params) -> list[str]:
    """What the network is and what its weights hold (for `jaxgames inspect`)."""
    lengths = sorted({len(t) for t in net.tuples})
    active = np.asarray(active_fraction(net, params))
    w = np.asarray(weights(net, params))
    return [
        f"{len(net.tuples)} tuples of length {lengths}, P={net.num_cell_states}, "
        f"{net.num_symmetries} symmetries, TCL {net.tcl}, combine {combine}, "
        f"{net.num_players} parameter set(s) x {net.num_outputs} output(s), output {net.output}",
        f"{w.size:,} weights; active (non-zero) by player: "
        + ", ".join(f"{p}: {a:.2%}" for p, a in enumerate(active))
        + f"; mean |w| {np.abs(w).mean():.4g}",
    ]


def make_model(game: Game, config: NTupleConfig, players: int, outputs: int) -> ValueModel:
    """The n-tuple network of `config` on `game`'s board."""
    if game.board_spec is None:
        raise ValueError(f"{game!r} has no board description for n-tuple networks")
    net = make_ntuple(
        game.board_spec,
        build_tuples(config, game.board_spec),
        players,
        outputs,
        symmetries=config.symmetries,
        output=config.output,
        tcl=config.tcl,
        tcl_beta=config.tcl_beta,
        tcl_init=config.tcl_init,
    )
    return model(game, net, config.combine)
