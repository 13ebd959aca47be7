"""`make` and `available_games`: names, options, clear errors."""

from __future__ import annotations

import pytest

import jaxgames


def test_available_games_lists_the_registered_games():
    names = jaxgames.available_games()
    assert names == sorted(names)
    assert {"tictactoe", "connect_four", "nim", "nim3p"} <= set(names)


def test_defaults_and_options():
    c4 = jaxgames.make("connect_four")
    assert (c4.board_shape, c4.num_actions, c4.num_players) == ((6, 7), 7, 2)
    assert jaxgames.make("connect_four", rows=6, cols=8).num_actions == 8
    assert jaxgames.make("connect_four", rows=6) is c4
    assert jaxgames.make("nim3p").num_players == 3


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("chess", {}, r"unknown game 'chess'; available games: 2048, connect_four, .*tictactoe"),
        ("connect_four", {"colums": 8}, r"unknown option\(s\) colums .* valid options: rows"),
        ("tictactoe", {"size": 4}, r"unknown option\(s\) size .* valid options: none"),
        ("connect_four", {"rows": 1}, r"rows=1 .* out of range; expected an integer in \[2, 16\]"),
        ("connect_four", {"cols": 7.0}, r"cols=7.0 .* must be an integer"),
        ("connect_four", {"cols": True}, r"cols=True .* must be an integer"),
        ("connect_four", {"rows": 3, "cols": 3}, r"connect=4 cannot fit on a 3x3 board"),
        ("nim", {"max_take": 0}, r"max_take=0 .* out of range"),
    ],
)
def test_bad_names_and_options_raise_clear_errors(name, options, message):
    with pytest.raises(ValueError, match=message):
        jaxgames.make(name, **options)
