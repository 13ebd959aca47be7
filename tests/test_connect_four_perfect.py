"""The perfect Connect Four player: exact scores (Pons' test sets), book, AB / AB-DL, UCI set."""

from __future__ import annotations

import functools
import time

import jax
import numpy as np
import pytest

import jaxgames
from jaxgames import datasets
from jaxgames.evaluation import arena
from jaxgames.opponents import connect_four_scores, make_opponent, random_policy
from jaxgames.opponents.connect_four import (
    ab_policy,
    board_bits,
    book_score,
    gbg_loss_rank,
    loss_end,
    perfect_player,
)
from tests import reference
from tests.helpers import SHARED_DATA

TESTSETS = SHARED_DATA / "connect4-testsets"
SETS = ["end-easy", "middle-easy", "middle-medium", "begin-easy", "begin-medium", "begin-hard"]
needs_testsets = pytest.mark.skipif(not TESTSETS.is_dir(), reason="Pons' test sets not present")


def read_set(name: str) -> list[tuple[list[int], int]]:
    out = []
    for line in (TESTSETS / f"{name}.txt").read_text().split("\n"):
        if line.strip():
            moves, score = line.split()
            out.append(([int(c) - 1 for c in moves], int(score)))
    return out


def solve_moves(moves) -> int:
    solver = perfect_player(6, 7).solver
    return solver.solve(*solver.position(moves))


@needs_testsets
@pytest.mark.parametrize("name", SETS)
def test_pons_sets_sample_exact(name):
    """Every 50th position of each set (20 each; the slow test runs all 6,000)."""
    for moves, score in read_set(name)[::50]:
        assert solve_moves(moves) == score, (name, moves)


@pytest.mark.slow
@needs_testsets
def test_pons_sets_all_6000_exact(capsys):
    rows = []
    for name in SETS:
        times = []
        for moves, score in read_set(name):
            start = time.perf_counter()
            assert solve_moves(moves) == score, (name, moves)
            times.append(time.perf_counter() - start)
        rows.append((name, len(times), np.mean(times), np.max(times)))
    with capsys.disabled():
        print("\nset              positions   mean ms    max ms")
        for name, n, mean, worst in rows:
            print(f"{name:<16}{n:>10}{mean * 1e3:>10.2f}{worst * 1e3:>10.1f}")


def test_book_matches_the_solver_on_sampled_positions():
    keys_rng = np.random.default_rng(0)
    game = jaxgames.make("connect_four")
    solver = perfect_player().solver
    for _ in range(3):
        state = game.init(None)
        moves = []
        for _ in range(keys_rng.integers(6, 9)):
            legal = jaxgames.legal_actions(state)
            move = int(keys_rng.choice(legal))
            after = jaxgames.checked_step(game, state, move)
            if bool(after.terminated):
                break
            state, moves = after, [*moves, move]
        position, mask, stones = board_bits(np.asarray(state.board))
        book = book_score(position + mask, stones)
        assert book is not None
        saved = solver.book
        solver.book = (saved[0], saved[1], min(stones - 1, 8))  # force a real search below
        try:
            assert solver.solve(position, mask, stones) == book, moves
        finally:
            solver.book = saved


def test_scores_api_on_known_positions():
    assert connect_four_scores([]) == [-2, -1, 0, 1, 0, -1, -2]
    # X has three in column 3: X wins at once in column 3 (score (43 - 6) // 2 = 18).
    scores = connect_four_scores([3, 0, 3, 0, 3, 6])
    assert scores[3] == 18
    full = connect_four_scores([0] * 6)
    assert full[0] is None and len(full) == 7
    with pytest.raises(ValueError, match="column 7"):
        connect_four_scores([7])
    with pytest.raises(ValueError, match="column 0 is full"):
        connect_four_scores([0] * 7)
    with pytest.raises(ValueError, match="game is over"):
        connect_four_scores([3, 0, 3, 0, 3, 0, 3])


def test_best_moves_agree_with_exact_move_scores():
    player = perfect_player()
    rng = np.random.default_rng(1)
    game = jaxgames.make("connect_four")
    for _ in range(6):
        state = game.init(None)
        for _ in range(rng.integers(10, 16)):
            after = jaxgames.checked_step(
                game, state, int(rng.choice(jaxgames.legal_actions(state)))
            )
            if bool(after.terminated):
                break
            state = after
        board = np.asarray(state.board)
        scores = player.move_scores(board)
        best = max(s for s in scores if s is not None)
        assert player.best_moves(board) == (best, [c for c, s in enumerate(scores) if s == best])


def _play_out(game, moves, policy, key):
    """The game after `moves`, played on to its end by `policy` for both sides."""
    state = game.init(None)
    for m in moves:
        state = jaxgames.checked_step(game, state, m)
    while not bool(state.terminated):
        key, sub = jax.random.split(key)
        batch = jax.tree.map(lambda x: x[None], state)
        state = game.step(state, policy(batch, sub)[0], None)
    return state


@pytest.mark.slow  # about 30 s of exact searches; test_loss_end_... plays out shorter games
def test_perfect_play_from_the_empty_board_is_a_first_player_win_on_move_41():
    game = jaxgames.make("connect_four")
    state = _play_out(game, [], make_opponent("perfect-dl", game), jax.random.key(0))
    assert int(state.step_count) == 41
    np.testing.assert_array_equal(state.rewards, [1.0, -1.0])


@pytest.mark.slow  # 25 s; AB from won UCI positions beats random in the default run, below
def test_ab_never_loses_to_random():
    game = jaxgames.make("connect_four")
    result = arena(game, make_opponent("perfect", game), random_policy, 3, jax.random.key(3))
    assert result.overall.wins == result.overall.games


@functools.cache
def _fiar_brute(moves: tuple[int, ...]) -> int:
    """Plain minimax score (Pons' convention) of a 6x8 position, for near-full boards."""
    game = reference.ConnectFour(6, 8)
    for m in moves:
        game.play(m)
    best = None
    for a in game.legal():
        child = reference.ConnectFour(6, 8)
        for m in (*moves, a):
            child.play(m)
        if child.over:
            score = (49 - len(moves)) // 2 if child.rewards[game.player] > 0 else 0
        else:
            score = -_fiar_brute((*moves, a))
        best = score if best is None else max(best, score)
    return best


def test_fiar_6x8_positions_near_the_end_match_brute_force():
    rng = np.random.default_rng(5)
    solver = perfect_player(6, 8).solver
    checked = 0
    while checked < 2:
        game = reference.ConnectFour(6, 8)
        moves = []
        while not game.over and len(moves) < 40:
            a = int(rng.choice(game.legal()))
            game.play(a)
            moves.append(a)
        if game.over:
            continue
        assert solver.solve(*solver.position(moves)) == _fiar_brute(tuple(moves)), moves
        checked += 1


def test_uci_set_counts_and_properties():
    boards, outcomes = datasets.load_uci_connect4()
    assert boards.shape == (67_557, 6, 7) and boards.dtype == np.int8
    assert outcomes.shape == (67_557,) and outcomes.dtype == np.int8
    assert [(outcomes == v).sum() for v in (1, -1, 0)] == [44_473, 16_635, 6_449]
    assert np.all((boards != 0).sum(axis=(1, 2)) == 8)
    assert np.all((boards == 1).sum(axis=(1, 2)) == 4)
    keys = {b.tobytes() for b in boards}
    mirrors = {b[:, ::-1].tobytes() for b in boards}
    assert len(keys) == len(boards)
    assert len(keys & mirrors) == sum(np.array_equal(b, b[:, ::-1]) for b in boards)
    rng = np.random.default_rng(2)
    for i in rng.choice(len(boards), 200, replace=False):
        position, mask, stones = board_bits(boards[i])
        assert np.sign(book_score(position + mask, stones)) == outcomes[i]
        for stone in (1, 2):  # neither player could complete four with the next stone
            for col in range(7):
                game = reference.ConnectFour()
                game.grid = boards[i].astype(int).tolist()
                height = int((boards[i][:, col] != 0).sum())
                if height == 6:
                    continue
                game.grid[height][col] = stone
                assert not game._won(stone), (i, stone, col)


# The published connect-4.data (UCI repository): its first rows, and the sha256 of a
# regeneration that matches its first 30 rows byte for byte, written with \n line ends.
UCI_FIRST_ROWS = [
    "b,b,b,b,b,b,b,b,b,b,b,b,x,o,b,b,b,b,x,o,x,o,x,o,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,win",
    "b,b,b,b,b,b,b,b,b,b,b,b,x,b,b,b,b,b,x,o,x,o,x,o,o,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,win",
    "b,b,b,b,b,b,o,b,b,b,b,b,x,b,b,b,b,b,x,o,x,o,x,o,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,b,win",
]
UCI_SHA256 = "c060eb3bebf4a10ce4d1caf8e9bf4770664b671952c5f0b58627a774613f885b"


def test_uci_set_is_the_published_file_row_for_row(tmp_path):
    import hashlib

    path = tmp_path / "connect-4.data"
    datasets.write_uci_connect4(path)
    data = path.read_bytes()
    assert data.split(b"\n")[:3] == [row.encode() for row in UCI_FIRST_ROWS]
    assert len(data) == 5_968_100 and b"\r" not in data
    assert hashlib.sha256(data).hexdigest() == UCI_SHA256
    # The text is the loaded arrays: x is the first player (1), cells a1, a2, ..., g6.
    boards, outcomes = datasets.load_uci_connect4()
    assert boards[0, 0, 2] == 1 and boards[0, 1, 2] == 2 and boards[1, 0, 4] == 2
    assert boards[2, 0, 1] == 2 and outcomes[:3].tolist() == [1, 1, 1]


@pytest.mark.slow  # 9 s; the shipped set is checked against the published file above
def test_uci_search_rebuilds_the_shipped_set():
    boards, outcomes = datasets.build_uci_connect4()
    shipped = datasets.load_uci_connect4()
    np.testing.assert_array_equal(boards, shipped[0])
    np.testing.assert_array_equal(outcomes, shipped[1])


def test_uci_evaluations_score_an_oracle_perfectly():
    import jax.numpy as jnp

    from jaxgames.analysis import uci_connect4_accuracy, uci_connect4_versus

    game = jaxgames.make("connect_four")
    boards, outcomes = datasets.load_uci_connect4()
    sample = np.random.default_rng(4).choice(len(boards), 300, replace=False)
    boards, outcomes = boards[sample], outcomes[sample]
    lookup = {b.tobytes(): float(o) for b, o in zip(boards, outcomes, strict=True)}

    def oracle(states):  # the exact outcome, read back on the host
        def host(b):
            return np.array([lookup[x.tobytes()] for x in np.asarray(b)], np.float32)

        shape = jax.ShapeDtypeStruct(states.board.shape[:1], jnp.float32)
        return jax.pure_callback(host, shape, states.board, vmap_method="sequential")

    accuracy = uci_connect4_accuracy(oracle, boards, outcomes, game)
    assert accuracy == {"decisive_accuracy": 1.0, "three_way_accuracy": 1.0, "positions": 300}
    flat = uci_connect4_accuracy(lambda s: jnp.zeros(s.board.shape[:1]), boards, outcomes, game)
    assert flat["decisive_accuracy"] == 0.0
    assert flat["three_way_accuracy"] == pytest.approx(np.mean(outcomes == 0))
    # From a position labelled "win for x", a perfect x wins against any opponent.
    won = boards[outcomes == 1][:6]
    result = uci_connect4_versus(
        game, make_opponent("perfect", game), random_policy, won, jax.random.key(0)
    )
    assert result.games == 6 and result.win_rate == 1.0


@pytest.mark.parametrize(
    "moves", [[3, 3, 3, 3, 3, 0, 2, 4, 4, 4, 4, 2, 4, 3, 0, 2, 6, 5], [0, 1, 0, 1, 0]]
)
def test_loss_end_is_where_perfect_play_ends(moves):
    """`loss_end` turns a losing score into the stone that ends the game: play the losing
    move, then AB-DL for both sides (the loser delays, the winner takes the fastest win)."""
    game = jaxgames.make("connect_four")
    scores = connect_four_scores(moves)
    col = next(c for c, s in enumerate(scores) if s is not None and s < 0)
    end = loss_end(scores[col], len(moves))
    state = _play_out(game, [*moves, col], make_opponent("perfect-dl", game), jax.random.key(1))
    assert int(state.step_count) == end
    assert float(state.rewards[len(moves) % 2]) == -1.0


def test_loss_end_rejects_a_non_losing_score():
    with pytest.raises(ValueError, match="losing score"):
        loss_end(0, 3)


def test_gbg_loss_rank_by_hand():
    # up to 8 stones after the move (GBG's book has no distances): every later loss ties
    assert gbg_loss_rank(1, 35) == gbg_loss_rank(1, 41) == (1, 0)
    assert gbg_loss_rank(5, 7) < gbg_loss_rank(5, 41)
    # 9-12 stones after the move (the deep book has distances): exact
    assert gbg_loss_rank(9, 35) < gbg_loss_rank(9, 37)
    # from 13 stones on: exact within 14 plies, then buckets of 20 stones, near below far
    assert gbg_loss_rank(13, 25) < gbg_loss_rank(13, 27) < gbg_loss_rank(13, 29)
    assert gbg_loss_rank(13, 29) == gbg_loss_rank(13, 39) == (1, 1)
    assert gbg_loss_rank(13, 39) < gbg_loss_rank(13, 41)


def test_gbg_dl_plays_like_ab_in_the_opening_and_like_ab_dl_later():
    game = jaxgames.make("connect_four")
    player = perfect_player(6, 7)

    def options(moves, style):
        state = game.init(None)
        for m in moves:
            state = jaxgames.checked_step(game, state, m)
        return {player.choose(np.asarray(state.board), w, style) for w in range(64)}

    # after the centre opening every reply loses; only the centre loses on the last stone
    assert options([3], "dl") == {3}
    assert options([3], "gbg-dl") == set(range(7))
    assert options([3], "ab") == set(range(7))
    # a draw or a win is played as by AB-DL
    assert options([3, 3, 3, 3, 3, 1, 1, 1, 1, 5, 5, 5, 5, 5], "gbg-dl") == {1}
    # the named opponent is this player, batched
    state = game.init(None)
    for m in [3, 3, 3, 3, 3, 1, 1, 1, 1, 5, 5, 5, 5, 5]:
        state = jaxgames.checked_step(game, state, m)
    batch = jax.tree.map(lambda x: np.stack([x, x]), state)
    moves = make_opponent("perfect-dl-gbg", game)(batch, jax.random.key(0))
    np.testing.assert_array_equal(moves, [1, 1])


def test_unknown_perfect_style_is_rejected():
    with pytest.raises(ValueError, match="unknown perfect-player style 'fast'"):
        ab_policy(jaxgames.make("connect_four"), "fast")


def drawn(picture: str) -> np.ndarray:
    """A 6x7 board from a drawing, top row first: . empty, x first player, o second, 3 a
    stray cell value."""
    rows = [line.split() for line in picture.strip().splitlines()]
    cells = {".": 0, "x": 1, "o": 2, "3": 3}
    return np.array([[cells[c] for c in row] for row in rows[::-1]], np.int8)


EMPTY_TOP = ". . . . . . .\n" * 3


@pytest.mark.parametrize(
    ("picture", "message"),
    [
        (
            EMPTY_TOP + ". . . . . . .\n. . . . . . .\n. . o x . . 3",
            r"cells must be 0 .* got \[3\]",
        ),
        (EMPTY_TOP + ". . . . . . .\n. . . x . . .\n. . o . . . .", "floats over an empty cell"),
        (EMPTY_TOP + ". . . . . . .\n. . . . . . .\n. . o o o . .", "no game gives that"),
        (EMPTY_TOP + ". . . x . . .\n. . . x . . .\n. . x x o . .", "no game gives that"),
        (
            ". . . . . . .\n. . . . . . .\n. . . x . . .\n"
            + ". . . x . . .\n. . . x o . .\n. . . x o o .",
            "already has four in a row",
        ),
    ],
)
def test_perfect_player_refuses_impossible_positions(picture, message):
    board = drawn(picture)
    for ask in (perfect_player().move_scores, perfect_player().best_moves):
        with pytest.raises(ValueError, match=message):
            ask(board)


def test_perfect_player_refuses_a_full_board_and_another_board_size():
    full = drawn("\n".join(["x x o o x x o", "o o x x o o x"] * 3))  # a draw
    with pytest.raises(ValueError, match="the board is full"):
        perfect_player().move_scores(full)
    with pytest.raises(ValueError, match=r"expected a 6x7 board .* got shape \(6, 8\)"):
        perfect_player(6, 7).move_scores(np.zeros((6, 8), np.int8))
    legal = drawn(EMPTY_TOP + ". . . . . . .\n. . . x . . .\n. . o x . . .")
    assert perfect_player().move_scores(legal) == tuple(connect_four_scores([3, 2, 3]))


@pytest.mark.parametrize("move", [3.7, "3", True, None])
def test_connect_four_scores_takes_column_numbers_only(move):
    with pytest.raises(ValueError, match=r"move 1: .* is not a column number"):
        connect_four_scores([3, move])
