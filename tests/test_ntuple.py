"""n-tuple networks: indices, incremental afterstates, symmetries, the sparse update, TCL."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jaxgames
from jaxgames import presets
from jaxgames.approximators import ntuple, tabular
from jaxgames.builders import make_learner
from tests.helpers import GAME_VARIANTS, max_game_length, play, random_games, variant_id

TTT = jaxgames.make("tictactoe")
C4 = jaxgames.make("connect_four")


def random_params(net, key, scale=0.3):
    params = ntuple.init(net)
    w = jax.random.uniform(key, params["w"].shape, minval=-scale, maxval=scale)
    return {**params, "w": w}


def test_indices_read_cells_in_base_p_first_cell_least_significant():
    net = ntuple.make_ntuple(TTT.board_spec, [[0, 4, 8], [2, 5]], 2, symmetries=False)
    state = play(TTT, [0, 4, 5])  # X on 0 and 5, O on 4
    idx = np.asarray(ntuple.indices(net, TTT.board_spec.encode(state)))
    # tuple 0 reads cells 0, 4, 8 = (1, 2, 0): 1 + 2*3 + 0*9 = 7; tuple 1 reads (0, 1) -> 3,
    # offset by the 27 entries of tuple 0.
    np.testing.assert_array_equal(idx, [7, 27 + 3])
    assert net.table_size == 27 + 9


@pytest.mark.parametrize(
    ("name", "length", "path"),
    [("othello", 7, "product"), ("2048", 6, "product"), ("2048", 7, "gather")],
)
def test_indices_match_a_per_cell_reference_on_both_paths(name, length, path):
    """Indices below 2^24 come from a float32 product, longer tuples from a gather; both
    read every cell of every tuple on every symmetric board exactly (random boards, the
    largest cell state included)."""
    game = jaxgames.make(name)
    spec = game.board_spec
    tuples = ntuple.random_walk_tuples(spec.neighbours, 12, length, jax.random.key(1))
    net = ntuple.make_ntuple(spec, tuples, 1)
    assert (spec.num_cell_states**length <= ntuple.EXACT_FLOAT32) == (path == "product")
    rng = np.random.default_rng(0)
    boards = rng.integers(0, spec.num_cell_states, (20, spec.num_cells))
    boards[0] = spec.num_cell_states - 1
    got = np.asarray(jax.jit(jax.vmap(lambda e: ntuple.indices(net, e)))(jnp.asarray(boards)))
    p = spec.num_cell_states
    for board, row in zip(boards, got, strict=True):
        want = []
        for t, cells in enumerate(net.tuples):
            for perm in spec.symmetries:
                index = sum(int(board[perm[c]]) * p**j for j, c in enumerate(cells))
                want.append(int(net.ts_offset[len(want)]) + index)
            assert len(want) == (t + 1) * net.num_symmetries
        np.testing.assert_array_equal(row, want)


@pytest.mark.parametrize("shape", [(7,), (352, 140), (4, 7, 140)])
def test_row_sums_are_sums_over_the_last_axis_in_float32(shape):
    """`sum_last` (a product with ones) sums the last axis, batched or not and under vmap, to
    float32 rounding of the exact sum, and keeps float32 (precision "highest")."""
    x = jax.random.normal(jax.random.key(1), shape) * 100.0
    got = jax.jit(ntuple.sum_last)(x)
    exact = np.asarray(x, np.float64).sum(axis=-1)
    assert got.dtype == jnp.float32 and got.shape == shape[:-1]
    bound = np.abs(np.asarray(x, np.float64)).sum(axis=-1) * shape[-1] * 2.0**-24
    assert np.all(np.abs(np.asarray(got, np.float64) - exact) <= bound)
    mapped = jax.jit(jax.vmap(ntuple.sum_last))(x.reshape((-1, *shape[-1:])))
    mapped = np.asarray(mapped, np.float64).reshape(shape[:-1])
    assert np.all(np.abs(mapped - exact) <= bound)


def test_sparse_update_equals_dense_gradient_step():
    """Distinct boards, no symmetries: the scatter-add equals a dense jax.grad step."""
    net = ntuple.make_ntuple(
        TTT.board_spec, [[0, 1, 2], [3, 4, 5, 6]], 2, symmetries=False, output="identity"
    )
    boards = [play(TTT, moves) for moves in ([0], [4, 1], [8, 3, 2], [6, 7, 5, 4])]
    idx = jnp.stack([ntuple.indices(net, TTT.board_spec.encode(b)) for b in boards])
    players = jnp.array([0, 1, 0, 1])
    signal = jnp.array([0.5, -1.0, 0.25, 2.0])
    params = random_params(net, jax.random.key(0))
    alpha = 0.3

    def objective(w):  # d/dw of sum_m signal_m * V_{p_m}(board_m): the TD semi-gradient
        values = jax.vmap(lambda p, i: ntuple.value(net, {"w": w}, p, i))(players, idx)
        return jnp.sum(signal * values)

    dense = params["w"] + alpha * net.step_scale * jax.grad(objective)(params["w"])
    hits = ntuple.Hits(players, jnp.zeros(4, jnp.int32), idx, signal, jnp.ones(4, bool))
    for combine in ntuple.COMBINE:
        sparse, counts = ntuple.update(net, params, hits, alpha, ntuple.init_counts(net), combine)
        np.testing.assert_allclose(sparse["w"][:-1], dense[:-1], rtol=1e-6, atol=1e-7)
        # the tally holds each weight's hits: every one of the 4 boards' 2 pairs, once
        flat = ntuple.flat_index(net, players[:, None], 0, idx)
        tally = np.asarray(counts)[np.asarray(flat).reshape(-1)]
        np.testing.assert_array_equal(tally, 1)
        assert int(np.asarray(counts).sum()) == idx.size


@pytest.mark.parametrize("invalid", ntuple.INVALID)
@pytest.mark.parametrize("combine", ntuple.COMBINE)
def test_the_hit_tally_it_starts_from_does_not_change_an_update(combine, invalid):
    """`update` reads only what one call adds to the tally: a tally that starts anywhere,
    wrapping past 2^31 on the entries hit, gives the same weights bit for bit, on boards
    whose symmetric copies repeat entries, with invalid rows, TCL and the batch's leaders."""
    net = ntuple.make_ntuple(
        TTT.board_spec, [list(range(9)), [0, 1, 2]], 2, symmetries=True, tcl="exponential"
    )
    boards = [play(TTT, m) for m in ([], [4], [4], [0, 8], [4, 0, 8], [2])]
    idx = jnp.stack([ntuple.indices(net, TTT.board_spec.encode(b)) for b in boards])
    hits = ntuple.Hits(
        jnp.array([0, 1, 1, 0, 1, 1]),
        jnp.zeros(6, jnp.int32),
        idx,
        jnp.array([0.5, -1.0, -1.0, 0.25, 2.0, 0.7]),
        jnp.array([True, True, True, True, True, False]),
        gain=jnp.ones(6),
        lead=jnp.array([0, 0, -1, 0, 0, 0], jnp.int32),  # board 2 is board 1's copy
    )
    params = random_params(net, jax.random.key(1))
    params["tcl"] = jnp.abs(params["tcl"]) + 0.1
    fresh = ntuple.init_counts(net)
    start = jax.random.randint(jax.random.key(2), fresh.shape, 0, 2**31 - 1, jnp.int32)
    flat = ntuple.flat_index(net, hits.player[:, None], 0, idx).reshape(-1)
    start = start.at[flat].set(2**31 - 2)  # the hits wrap around
    update = jax.jit(functools.partial(ntuple.update, net, combine=combine, invalid=invalid))
    want, zero_based = update(params, hits, jnp.float32(0.6), fresh)
    got, tally = update(params, hits, jnp.float32(0.6), start)
    for key in want:
        np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(want[key]))
    np.testing.assert_array_equal(
        np.asarray(tally - start)[:-1], np.asarray(zero_based)[:-1]
    )  # the tally moved by the same hits (the trash slot, last, is never read)
    assert int(np.asarray(zero_based)[:-1].sum()) > 0


def test_symmetric_copies_reading_one_entry_change_it_once():
    """On the empty board all 8 symmetric copies read the same entry: it moves once."""
    net = ntuple.make_ntuple(
        TTT.board_spec, [list(range(9))], 1, symmetries=True, output="identity"
    )
    idx = ntuple.indices(net, TTT.board_spec.encode(TTT.init(None)))
    assert len(set(np.asarray(idx).tolist())) == 1
    hits = ntuple.Hits(
        jnp.zeros(1, jnp.int32),
        jnp.zeros(1, jnp.int32),
        idx[None],
        jnp.array([1.0]),
        jnp.ones(1, bool),
    )
    new, _ = ntuple.update(net, ntuple.init(net), hits, 0.8, ntuple.init_counts(net))
    assert float(new["w"][idx[0]]) == pytest.approx(0.8 / 8)
    assert float(jnp.abs(new["w"]).sum() - jnp.abs(new["w"][-1])) == pytest.approx(0.8 / 8)


def copies_of_one_board(k, signal, **fields):
    """A whole-board tabular net and k update requests for one TicTacToe board."""
    net = ntuple.make_ntuple(
        TTT.board_spec, [list(range(9))], 1, symmetries=False, output="identity"
    )
    idx = ntuple.indices(net, TTT.board_spec.encode(play(TTT, [4])))
    hits = ntuple.Hits(
        jnp.zeros(k, jnp.int32),
        jnp.zeros(k, jnp.int32),
        jnp.broadcast_to(idx, (k, 1)),
        jnp.full(k, signal),
        jnp.ones(k, bool),
        **fields,
    )
    return net, idx, hits


@pytest.mark.parametrize("k", [1, 2, 5, 40])
def test_hits_from_several_games_combine_like_sequential_updates(k):
    """k games updating the same board toward the same target move it as k sequential
    updates would: by (1 - (1 - r)^k) of the way instead of r (r = alpha * step share)."""
    alpha, target = 0.3, 1.0
    net, idx, hits = copies_of_one_board(k, target)
    new, _ = ntuple.update(net, ntuple.init(net), hits, alpha, ntuple.init_counts(net))
    sequential = 0.0
    for _ in range(k):
        sequential += alpha * (target - sequential)
    assert float(ntuple.value(net, new, 0, idx)) == pytest.approx(sequential, rel=1e-5)
    weight, _ = ntuple.update(net, ntuple.init(net), hits, alpha, ntuple.init_counts(net), "weight")
    assert float(ntuple.value(net, weight, 0, idx)) == pytest.approx(sequential, rel=1e-5)
    mean, _ = ntuple.update(net, ntuple.init(net), hits, alpha, ntuple.init_counts(net), "mean")
    assert float(ntuple.value(net, mean, 0, idx)) == pytest.approx(alpha * target, rel=1e-5)


C4_WALKS = tuple(
    tuple(t) for t in ntuple.random_walk_tuples(C4.board_spec.neighbours, 8, 6, jax.random.key(3))
)


@functools.cache
def _symmetric_net(game_name, output, tcl):
    """TicTacToe's whole-board tuple with its 8 symmetries (GBG's), or Connect Four
    random-walk tuples with the mirror."""
    game, tuples = (TTT, [list(range(9))]) if game_name == "tictactoe" else (C4, C4_WALKS)
    return ntuple.make_ntuple(game.board_spec, tuples, 1, True, output=output, tcl=tcl)


# (name, game, moves): the TicTacToe centre (all 8 copies read one entry), a corner (pairs of
# copies share entries), an asymmetric board; Connect Four's empty-board afterstates (the
# centre column's two copies read the same entries).
SYMMETRIC_BOARDS = [
    ("ttt-centre", "tictactoe", [4]),
    ("ttt-corner", "tictactoe", [0]),
    ("ttt-asym", "tictactoe", [0, 1, 7]),
    *((f"c4-col{c}", "connect_four", [c]) for c in range(7)),
]


@functools.cache
def _copies_and_loop(net, k):
    """Jitted (k copies in one update, k single updates in sequence) toward a target."""
    tanh = net.output == "tanh"

    def rows(idx, v, target, n):
        slope = 1.0 - v * v if tanh else 1.0
        return ntuple.Hits(
            jnp.zeros(n, jnp.int32),
            jnp.zeros(n, jnp.int32),
            jnp.broadcast_to(idx, (n, idx.shape[0])),
            jnp.full(n, (target - v) * slope),
            jnp.ones(n, bool),
            gain=jnp.full(n, slope * slope),
        )

    def copies(params, idx, alpha, target):
        v = ntuple.value(net, params, 0, idx)
        hits = rows(idx, v, target, k)
        return ntuple.update(net, params, hits, alpha, ntuple.init_counts(net))[0]

    def loop(params, idx, alpha, target):
        def one(p, _):
            v = ntuple.value(net, p, 0, idx)
            return ntuple.update(net, p, rows(idx, v, target, 1), alpha, ntuple.init_counts(net))

        return jax.lax.scan(lambda p, _: (one(p, _)[0], None), params, None, length=k)[0]

    return jax.jit(copies), jax.jit(loop)


def _total(net, params, idx):
    """The board's pre-activation (the sum of its reads)."""
    return float(jnp.sum(params["w"][ntuple.flat_index(net, 0, 0, idx)]))


@pytest.mark.parametrize("tcl", ["none", "exponential"])
@pytest.mark.parametrize("output", ["identity", "tanh"])
@pytest.mark.parametrize("k", [1, 2, 16, 256])
def test_copies_of_a_symmetric_board_move_it_as_sequential_updates_would(k, output, tcl):
    """The combine rule with symmetries on: k copies of one board in one update against k
    single updates in a loop. A LUT entry read by c symmetric copies moves the board's sum c
    times its change, so the board's relative step counts it c times. Identity output: the
    same value for every k (before, the TicTacToe centre went to 5.64 instead of 0.8 at
    k = 16). tanh: k = 1 is exact; for k > 1 the pre-activation moves exactly as k updates of
    the linearised output would, by (1 - (1 - r)^k) (target - v) / sigma'(v) with
    r = alpha sigma'(v)^2, from v = 0 and from v = tanh(0.6) toward -0.3."""
    alpha, target = 0.3, 0.8
    for name, game_name, moves in SYMMETRIC_BOARDS:
        game = TTT if game_name == "tictactoe" else C4
        net = _symmetric_net(game_name, output, tcl)
        idx = ntuple.indices(net, game.board_spec.encode(play(game, moves)))
        copies, loop = _copies_and_loop(net, k)
        params = ntuple.init(net)
        together = float(ntuple.value(net, copies(params, idx, alpha, target), 0, idx))
        one_by_one = float(ntuple.value(net, loop(params, idx, alpha, target), 0, idx))
        if output == "identity" or k == 1:
            assert together == pytest.approx(one_by_one, rel=1e-5, abs=1e-6), name
        if output == "identity":
            continue
        single, _ = _copies_and_loop(net, 1)
        for start, goal in ((params, target), (single(params, idx, 1.0, 0.6), -0.3)):
            v, total = float(ntuple.value(net, start, 0, idx)), _total(net, start, idx)
            slope = 1 - v * v
            r = alpha * slope * slope  # the TCL factor is still 1: one same-signed change
            moved = _total(net, copies(start, idx, alpha, goal), idx) - total
            want = (1 - (1 - r) ** k) * (goal - v) / slope
            assert moved == pytest.approx(want, rel=1e-4, abs=1e-6), (name, goal)


@pytest.mark.parametrize("gain", [1.0, 0.25, 0.01])
def test_the_relative_step_of_copies_follows_their_gain(gain):
    """k copies with gain g (sigma'^2 of a tanh board) move their weight like k sequential
    updates whose relative step is alpha * g: nearly the sum of their steps when it is small,
    the mean when it is 1."""
    alpha, k = 2.0, 20
    net, idx, hits = copies_of_one_board(k, 1.0, gain=jnp.full(k, gain))
    new, _ = ntuple.update(net, ntuple.init(net), hits, alpha, ntuple.init_counts(net))
    r = min(alpha * gain, 1.0)
    expected = alpha * (1.0 - (1.0 - r) ** k) / r
    assert float(new["w"][idx[0]]) == pytest.approx(expected, rel=1e-5)


def test_boards_that_share_few_weights_add_up_like_separate_updates():
    """Two different boards sharing one LUT entry of many: each moves almost by its full
    step (its effective copies are 1 + 1/TS), so the shared entry gets nearly the sum."""
    net = ntuple.make_ntuple(
        TTT.board_spec,
        [[0], [1], [2], [3], [4], [5], [6], [7], [8]],
        1,
        symmetries=False,
        output="identity",
    )
    boards = [play(TTT, [0, 1, 2, 3]), play(TTT, [5, 6, 7, 8])]  # cell 4 empty in both
    idx = jnp.stack([ntuple.indices(net, TTT.board_spec.encode(b)) for b in boards])
    shared = set(np.asarray(idx[0]).tolist()) & set(np.asarray(idx[1]).tolist())
    assert len(shared) == 1
    hits = ntuple.Hits(
        jnp.zeros(2, jnp.int32), jnp.zeros(2, jnp.int32), idx, jnp.ones(2), jnp.ones(2, bool)
    )
    alpha = 1.0  # r = 1: copies n scale a board's step by 1 / n
    new, _ = ntuple.update(net, ntuple.init(net), hits, alpha, ntuple.init_counts(net))
    n = 1.0 + 1.0 / 9.0
    assert float(new["w"][shared.pop()]) == pytest.approx(2 * alpha / 9 / n, rel=1e-5)
    for combine in ("weight", "mean"):  # per weight at r = 1: the shared entry gets the mean
        other, _ = ntuple.update(
            net, ntuple.init(net), hits, alpha, ntuple.init_counts(net), combine
        )
        assert float(jnp.max(other["w"])) == pytest.approx(alpha / 9, rel=1e-5)


def test_an_eligibility_history_moves_with_its_board_as_one_update():
    """A board and its history (lead offsets 0, -1) are one update: no copies between them,
    so they move by their full steps even where they read the same entries."""
    net = ntuple.make_ntuple(TTT.board_spec, [[0, 1, 2]], 1, symmetries=False, output="identity")
    idx = ntuple.indices(net, TTT.board_spec.encode(play(TTT, [4])))
    signal = jnp.array([1.0, 0.5])
    hits = ntuple.Hits(
        jnp.zeros(2, jnp.int32),
        jnp.zeros(2, jnp.int32),
        jnp.broadcast_to(idx, (2, 1)),
        signal,
        jnp.ones(2, bool),
        gain=jnp.ones(2),
        lead=jnp.array([0, -1], jnp.int32),
    )
    new, counts = ntuple.update(net, ntuple.init(net), hits, 1.0, ntuple.init_counts(net))
    assert float(new["w"][idx[0]]) == pytest.approx(1.5)
    # one update on the entry (its leader's), not two
    assert int(counts[idx[0]]) == 1 and int(jnp.abs(counts[:-1]).sum()) == 1
    apart = hits._replace(lead=None)  # two games: two copies of one board at r = 1
    new, _ = ntuple.update(net, ntuple.init(net), apart, 1.0, ntuple.init_counts(net))
    assert float(new["w"][idx[0]]) == pytest.approx(0.75)


def test_unknown_combine_is_refused():
    net = ntuple.make_ntuple(TTT.board_spec, [[0, 1]], 1, symmetries=False)
    idx = ntuple.indices(net, TTT.board_spec.encode(TTT.init(None)))
    hits = ntuple.Hits(
        jnp.zeros(1, jnp.int32),
        jnp.zeros(1, jnp.int32),
        idx[None],
        jnp.ones(1),
        jnp.ones(1, bool),
    )
    with pytest.raises(ValueError, match=r"'sum'.*expected one of sequential, weight, mean"):
        ntuple.update(net, ntuple.init(net), hits, 1.0, ntuple.init_counts(net), "sum")


def test_invalid_hits_change_no_weight():
    net = ntuple.make_ntuple(TTT.board_spec, [[0, 1, 2]], 2, symmetries=True)
    idx = ntuple.indices(net, TTT.board_spec.encode(play(TTT, [0, 4])))
    hits = ntuple.Hits(
        jnp.zeros(2, jnp.int32),
        jnp.zeros(2, jnp.int32),
        jnp.broadcast_to(idx, (2, idx.shape[0])),
        jnp.array([1.0, jnp.nan]),
        jnp.array([False, False]),
    )
    new, counts = ntuple.update(net, ntuple.init(net), hits, 1.0, ntuple.init_counts(net))
    np.testing.assert_array_equal(ntuple.weights(net, new), 0.0)
    assert int(jnp.abs(counts).sum()) == 0, "invalid rows add no hit to the tally"


def test_tcl_scales_steps_by_the_coherence_of_past_changes():
    net = ntuple.make_ntuple(
        TTT.board_spec,
        [[0, 1]],
        1,
        symmetries=False,
        output="identity",
        tcl="identity",
        tcl_init=1e-4,
    )
    idx = ntuple.indices(net, TTT.board_spec.encode(play(TTT, [0])))
    params, counts = ntuple.init(net), ntuple.init_counts(net)

    def hit(signal):
        return ntuple.Hits(
            jnp.zeros(1, jnp.int32),
            jnp.zeros(1, jnp.int32),
            idx[None],
            jnp.array([signal]),
            jnp.ones(1, bool),
        )

    entry = int(idx[0])
    params, counts = ntuple.update(net, params, hit(1.0), 1.0, counts)
    assert float(params["w"][entry]) == pytest.approx(1.0)  # |N|/A = 1 at the start
    params, counts = ntuple.update(net, params, hit(-1.0), 1.0, counts)
    # N = 1e-4 + 1, A = 1e-4 + 1: factor ~1 for the second step too
    assert float(params["w"][entry]) == pytest.approx(0.0, abs=1e-3)
    np.testing.assert_allclose(params["tcl"][entry], [1e-4, 1e-4 + 2.0], atol=1e-6)
    params, counts = ntuple.update(net, params, hit(1.0), 1.0, counts)
    # Now |N| / A = 1e-4 / 2: the step nearly vanishes.
    assert float(params["w"][entry]) == pytest.approx(0.0, abs=1e-3)
    exp_net = ntuple.make_ntuple(TTT.board_spec, [[0, 1]], 1, tcl="exponential", tcl_beta=2.7)
    acc = jnp.array([[0.0, 1.0], [1.0, 1.0], [0.5, 1.0]])
    np.testing.assert_allclose(
        ntuple.tcl_factor(exp_net, acc), np.exp(2.7 * (np.array([0.0, 1.0, 0.5]) - 1)), rtol=1e-6
    )


@functools.cache
def _checkers(name, options):
    game = jaxgames.make(name, **dict(options))
    spec = game.board_spec
    tuples = ntuple.random_walk_tuples(
        spec.neighbours, 6, min(4, spec.num_cells), jax.random.key(1)
    )
    net = ntuple.make_ntuple(spec, tuples, game.num_players, symmetries=True)
    model = ntuple.model(game, net)
    full = jax.jit(jax.vmap(model.features))
    after_all = jax.jit(jax.vmap(jax.vmap(game.afterstate, in_axes=(None, 0)), in_axes=(0, None)))
    incremental = jax.jit(jax.vmap(model.afterstate_features))
    return game, net, model, full, after_all, incremental


@pytest.mark.parametrize("variant", GAME_VARIANTS, ids=variant_id)
def test_incremental_afterstate_indices_equal_full_reindexing(variant):
    name, options = variant
    if jaxgames.make(name, **options).board_spec.changes is None:
        pytest.skip("no incremental afterstate indices for this game (many cells change)")
    game, _, _, full, after_all, incremental = _checkers(name, tuple(options.items()))
    _, states = random_games(game, 16, max_game_length(game), jax.random.key(3))
    states = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), states)
    live = ~np.asarray(states.terminated)
    states = jax.tree.map(lambda x: x[live], states)
    actions = jnp.arange(game.num_actions)
    after = after_all(states, actions)  # [S, A]
    expected = jax.vmap(full)(after)
    got = incremental(states, full(states))
    legal = np.asarray(states.legal_action_mask)
    np.testing.assert_array_equal(np.asarray(got)[legal], np.asarray(expected)[legal])


@pytest.mark.parametrize("name", ["tictactoe", "connect_four", "nim"])
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**30), depth=st.integers(0, 8))
def test_values_are_invariant_under_board_symmetries(name, seed, depth):
    game = jaxgames.make(name)
    spec = game.board_spec
    tuples = ntuple.random_walk_tuples(
        spec.neighbours, 5, min(3, spec.num_cells), jax.random.key(seed)
    )
    v_net = ntuple.make_ntuple(spec, tuples, 2, symmetries=True)
    q_net = ntuple.make_ntuple(spec, tuples, 2, num_outputs=game.num_actions, symmetries=True)
    _, states = random_games(game, 1, max_game_length(game), jax.random.key(seed))
    state = jax.tree.map(lambda x: x[0, min(depth, max_game_length(game) - 1)], states)
    encoded = np.asarray(spec.encode(state))
    v_params = random_params(v_net, jax.random.key(seed + 1))
    q_params = random_params(q_net, jax.random.key(seed + 2))
    base_idx = ntuple.indices(v_net, jnp.asarray(encoded))
    v = float(ntuple.value(v_net, v_params, 1, base_idx))
    q = np.asarray(ntuple.q_values(q_net, q_params, 1, ntuple.indices(q_net, jnp.asarray(encoded))))
    for s, perm in enumerate(spec.symmetries):
        moved = encoded[perm]  # the board as symmetry s shows it
        assert float(
            ntuple.value(v_net, v_params, 1, ntuple.indices(v_net, jnp.asarray(moved)))
        ) == pytest.approx(v, rel=1e-5, abs=1e-6)
        q_sym = np.asarray(
            ntuple.q_values(q_net, q_params, 1, ntuple.indices(q_net, jnp.asarray(moved)))
        )
        np.testing.assert_allclose(q_sym[spec.action_symmetries[s]], q, rtol=1e-5, atol=1e-6)


def test_random_walk_tuples_are_seeded_connected_and_distinct():
    spec = C4.board_spec
    a = ntuple.random_walk_tuples(spec.neighbours, 20, 8, jax.random.key(4))
    b = ntuple.random_walk_tuples(spec.neighbours, 20, 8, jax.random.key(4))
    c = ntuple.random_walk_tuples(spec.neighbours, 20, 8, jax.random.key(5))
    assert a == b and a != c
    for t in a:
        assert len(t) == 8 and len(set(t)) == 8
        for cell in t[1:]:  # every cell is adjacent to one seen before it
            assert any(cell in spec.neighbours[prev] for prev in t[: t.index(cell)])


def test_bad_tuples_and_modes_are_rejected():
    with pytest.raises(ValueError, match="bad tuple"):
        ntuple.make_ntuple(TTT.board_spec, [[0, 0, 1]], 2)
    with pytest.raises(ValueError, match="bad tuple"):
        ntuple.make_ntuple(TTT.board_spec, [[0, 9]], 2)
    with pytest.raises(ValueError, match="tcl='fast'"):
        ntuple.make_ntuple(TTT.board_spec, [[0, 1]], 2, tcl="fast")
    with pytest.raises(ValueError, match="too large"):
        tabular.make_tabular(C4.board_spec, 2)


def test_tabular_is_one_whole_board_tuple():
    net = tabular.make_tabular(TTT.board_spec, 2)
    assert net.table_size == 3**9 and net.num_symmetries == 1
    a = ntuple.indices(net, TTT.board_spec.encode(play(TTT, [0, 1])))
    b = ntuple.indices(net, TTT.board_spec.encode(play(TTT, [1, 0])))
    assert int(a[0]) != int(b[0])


@pytest.mark.parametrize("combine", ntuple.COMBINE)
@pytest.mark.parametrize("tcl", ["none", "exponential"])
def test_dropping_invalid_entries_gives_the_trash_slots_weights_bit_for_bit(combine, tcl):
    """`invalid="drop"` (out-of-range entries the scatter skips: what a GPU gets) and
    `invalid="trash"` (all sent to the trash slot: XLA:CPU's) give the same weights, TCL
    accumulators and hit tallies, on a batch with invalid rows, symmetric copies that read
    one entry (the TicTacToe centre and corners) and rows sharing weights, over three updates
    (so TCL factors differ from 1)."""
    net = _symmetric_net("tictactoe", "tanh", tcl)
    rng = np.random.default_rng(0)
    boards = [play(TTT, m) for m in ([4], [0], [0, 1, 7], [2, 4, 6], [], [8, 0])]
    idx = jnp.stack([ntuple.indices(net, TTT.board_spec.encode(b)) for b in boards])
    m = 48
    pick = rng.integers(0, len(boards), m)
    hits = ntuple.Hits(
        jnp.zeros(m, jnp.int32),
        jnp.zeros(m, jnp.int32),
        idx[pick],
        jnp.asarray(rng.normal(size=m), jnp.float32),
        jnp.asarray(rng.random(m) < 0.7),
        gain=jnp.asarray(rng.uniform(0.1, 1.0, m), jnp.float32),
        lead=jnp.asarray(-(np.arange(m) % 2), jnp.int32),
    )
    out = {}
    for invalid in ntuple.INVALID:
        step = jax.jit(functools.partial(ntuple.update, net, combine=combine, invalid=invalid))
        params, counts = ntuple.init(net), ntuple.init_counts(net)
        for _ in range(3):
            params, counts = step(params, hits, jnp.float32(0.5), counts)
        out[invalid] = {k: np.asarray(v)[:-1] for k, v in params.items()}
        out[invalid]["tally"] = np.asarray(counts)[:-1]
    for name in out["trash"]:
        np.testing.assert_array_equal(out["drop"][name], out["trash"][name], err_msg=name)
    assert np.any(out["drop"]["w"] != 0) and np.any(out["drop"]["tally"] != 0)
    with pytest.raises(ValueError, match="invalid 'skip'; expected one of trash, drop"):
        ntuple.update(net, ntuple.init(net), hits, 0.5, ntuple.init_counts(net), invalid="skip")


def test_the_training_chunk_updates_its_tables_in_place():
    """`update`'s docstring: XLA updates the (large) tables in place. connect4-td-farl's 9.2M
    weights, TCL accumulators and hit tally are never copied in its compiled training chunk:
    two copies a step cost more than the update (benchmarks/table_layout.py's first version
    ran 2.7x slower with them); an update that reads the old weights after its scatter adds
    two here."""
    config = presets.load("connect4-td-farl")
    train = dataclasses.replace(config.train, batch_size=8, chunk_steps=2)
    learner = make_learner(dataclasses.replace(config, train=train))
    size = ntuple.num_weights(learner.model.net) + 1
    text = learner.chunk.lower(learner.init(jax.random.key(0))).compile().as_text()
    copies = [line.strip() for line in text.splitlines() if " copy(" in line and f"[{size}" in line]
    assert f"[{size}]" in text and not copies, copies[:4]
