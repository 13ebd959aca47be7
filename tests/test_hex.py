"""Hex rules on drawn positions: odd-shaped chains, both players' edges, every board size's edge
cases, no draws, and the incremental group bookkeeping."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import core
from jaxgames.games.hex import hex_neighbours


def cells_of(text: str, mark: str) -> list[int]:
    """Flat indices of `mark` in a drawing (rows may be indented, as on a Hex board)."""
    rows = [line.split() for line in text.strip().splitlines()]
    return [r * len(rows) + c for r, row in enumerate(rows) for c, v in enumerate(row) if v == mark]


def play_position(game, xs, os, last=None):
    """Plays X stones `xs` and O stones `os` alternately (X first), then `last` for X if given."""
    state = game.init(jax.random.key(0))
    assert len(xs) in (len(os), len(os) + 1)
    for i, x in enumerate(xs):
        state = core.checked_step(game, state, x)
        assert not bool(state.terminated), f"X won early at move {i}"
        if i < len(os):
            state = core.checked_step(game, state, os[i])
            assert not bool(state.terminated), f"O won early at move {i}"
    if last is not None:
        state = core.checked_step(game, state, last)
    return state


def test_neighbours_are_the_six_hex_directions():
    near = hex_neighbours(4)
    assert sorted(near[5]) == sorted([1, 2, 4, 6, 8, 9])  # (1,1)
    assert sorted(n for n in near[0] if n >= 0) == [1, 4]  # corner (0,0)
    assert sorted(n for n in near[3] if n >= 0) == [2, 6, 7]  # acute corner (0,3)


def test_first_player_wins_with_a_zigzag_chain_top_to_bottom():
    board = """
        . X . . .
         . X . . .
          X . . . .
           X X X . .
            . . X . .
    """
    xs = cells_of(board, "X")
    game = jaxgames.make("hex", size=5)
    last = xs.pop(3)  # the (3, 0) stone links the top part to the bottom part
    os = [4, 9, 14, 19, 24, 23][: len(xs)]
    state = play_position(game, xs, os, last)
    assert bool(state.terminated)
    np.testing.assert_array_equal(state.rewards, [1.0, -1.0])
    assert not state.legal_action_mask.any()


def test_second_player_wins_left_to_right_and_not_top_to_bottom():
    game = jaxgames.make("hex", size=4)
    # O: a vertical line in column 1 touches top and bottom, which is X's goal, not O's.
    state = play_position(game, [0, 3, 15], [1, 5, 9])
    state = core.checked_step(game, state, 13)  # O completes column 1: no win for O
    assert not bool(state.terminated)
    # O: (2, 0) - (1, 1) - (1, 2) - (1, 3) joins column 0 to column 3.
    game = jaxgames.make("hex", size=4)
    state = play_position(game, [0, 1, 2], [8, 5, 6])
    state = core.checked_step(game, state, 12)  # X somewhere harmless
    state = core.checked_step(game, state, 7)
    assert bool(state.terminated)
    np.testing.assert_array_equal(state.rewards, [-1.0, 1.0])


def test_size_two_edge_cases():
    game = jaxgames.make("hex", size=2)
    # (0, 1) and (1, 0) are adjacent: two X stones join top and bottom.
    state = play_position(game, [1], [0], 2)
    np.testing.assert_array_equal(state.rewards, [1.0, -1.0])
    # (0, 0) and (1, 1) are not adjacent: no win for X.
    state = play_position(game, [0], [1], 3)
    assert not bool(state.terminated)
    state = core.checked_step(game, state, 2)  # O: (1, 0) joins (0, 1): column 0 to column 1
    np.testing.assert_array_equal(state.rewards, [-1.0, 1.0])


def test_a_bridge_stone_merges_two_groups_touching_different_edges():
    game = jaxgames.make("hex", size=5)
    top = [2, 7]  # (0, 2), (1, 2)
    bottom = [17, 22]  # (3, 2), (4, 2)
    state = play_position(game, top + bottom, [0, 5, 10, 15])
    assert not bool(state.terminated)
    group = np.asarray(state.extras["group"])
    assert group[2] == group[7] and group[17] == group[22] and group[2] != group[17]
    elsewhere = core.checked_step(game, core.checked_step(game, state, 24), 20)
    assert not bool(elsewhere.terminated)
    won = core.checked_step(game, state, 12)  # (2, 2) touches (1, 2) and (3, 2)
    assert bool(won.terminated) and float(won.rewards[0]) == 1.0
    merged = np.asarray(won.extras["group"])
    assert len({merged[c] for c in top + bottom + [12]}) == 1


@pytest.mark.parametrize("size", [2, 3, 6, 13])
def test_no_draws_every_full_game_has_one_winner(size):
    game = jaxgames.make("hex", size=size)

    def one(key):
        def body(state, key):
            action = core.sample_legal(key, state.legal_action_mask)
            nxt = game.step(state, action, None)
            return jax.tree.map(lambda a, b: jnp.where(state.terminated, a, b), state, nxt), None

        final, _ = jax.lax.scan(body, game.init(key), jax.random.split(key, size * size))
        return final

    finals = jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(size), 200))
    assert bool(jnp.all(finals.terminated))
    np.testing.assert_array_equal(np.sort(np.asarray(finals.rewards), axis=1)[:, ::-1].sum(1), 0)
    assert bool(jnp.all(jnp.abs(finals.rewards) == 1))


def test_rotation_symmetry_maps_each_players_edges_to_themselves():
    game = jaxgames.make("hex", size=4)
    perms = game.board_spec.symmetries
    assert perms.shape == (2, 16)
    np.testing.assert_array_equal(perms[1], np.arange(16)[::-1])


def test_bad_sizes_are_rejected():
    with pytest.raises(ValueError, match="size"):
        jaxgames.make("hex", size=14)
    with pytest.raises(ValueError, match="size"):
        jaxgames.make("hex", size=1)


@pytest.mark.slow
def test_perfect_player_on_3x3_matches_a_brute_force_negamax():
    import functools

    from jaxgames.opponents import perfect
    from tests.reference import Hex

    @functools.cache
    def negamax(cells: tuple) -> int:
        """+1 if the player to move wins with perfect play (Hex has no draws)."""
        ref = Hex(3)
        ref.grid = [list(cells[r * 3 : r * 3 + 3]) for r in range(3)]
        ref.player = 0 if cells.count(1) == cells.count(2) else 1
        for move in ref.legal():
            child = list(cells)
            child[move] = ref.player + 1
            after = Hex(3)
            after.grid = [child[r * 3 : r * 3 + 3] for r in range(3)]
            if after._connected(ref.player + 1) or negamax(tuple(child)) < 0:
                return 1
        return -1

    game = jaxgames.make("hex", size=3)
    table = perfect.solve(game)
    key = int(perfect.state_key(game, game.init(jax.random.key(0))))
    # the first moves after which the second player, to move, loses
    winning = [a for a in range(9) if negamax(tuple(1 if c == a else 0 for c in range(9))) < 0]
    np.testing.assert_array_equal(np.flatnonzero(table.best[key]), winning)
    assert "perfect" in jaxgames.opponents.opponent_names(game)
    assert "perfect" not in jaxgames.opponents.opponent_names(jaxgames.make("hex", size=4))
