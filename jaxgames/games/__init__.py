"""The games, one module each, registered with `jaxgames.make` here."""

from jaxgames.games.connect_four import make_connect_four
from jaxgames.games.game2048 import make_2048
from jaxgames.games.hex import make_hex
from jaxgames.games.nim import make_nim
from jaxgames.games.nim3p import make_nim3p
from jaxgames.games.othello import make_othello
from jaxgames.games.tictactoe import make_tictactoe
from jaxgames.registry import Option, register


def _check_connect_four(opts: dict[str, int]) -> str | None:
    if opts["connect"] > max(opts["rows"], opts["cols"]):
        return f"connect={opts['connect']} cannot fit on a {opts['rows']}x{opts['cols']} board"
    return None


register("tictactoe", make_tictactoe)
register(
    "connect_four",
    make_connect_four,
    {
        "rows": Option(6, 2, 16, "board rows"),
        "cols": Option(7, 2, 16, "board columns"),
        "connect": Option(4, 2, 16, "stones in a row to win"),
    },
    _check_connect_four,
)
register("othello", make_othello)
register("2048", make_2048)
register("hex", make_hex, {"size": Option(6, 2, 13, "board side (cells)")})
register(
    "nim",
    make_nim,
    {
        "heaps": Option(3, 1, 16, "number of heaps"),
        "size": Option(5, 1, 100, "items per heap at the start"),
        "max_take": Option(5, 1, 100, "most items one move may take"),
    },
)
register(
    "nim3p",
    make_nim3p,
    {
        "heaps": Option(3, 1, 16, "number of heaps"),
        "size": Option(5, 1, 100, "items per heap at the start"),
    },
)

__all__ = [
    "make_2048",
    "make_connect_four",
    "make_hex",
    "make_nim",
    "make_nim3p",
    "make_othello",
    "make_tictactoe",
]
