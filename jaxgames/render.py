"""Boards as SVG pictures: `render_svg(game, state)` for one position, `render_game_svg` for a
whole game as a strip of frames. Host-side; the result is a `str` that notebooks show inline.

    svg = jaxgames.render_svg(game, state, last_action=3, values=agent.move_values(state))
    open("position.svg", "w").write(svg)

Looks (after pgx's): TicTacToe crosses and rings on a grid; Connect Four red and yellow discs
in a blue frame, row 0 at the bottom; Othello black and white discs on green; Hex a rhombus of
hexagons whose red (first player, top to bottom) and blue (second, left to right) edges are
drawn; Nim heaps as rows of sticks; 2048 tiles coloured by value. The last move is ringed;
`values` (one per action, NaN for illegal moves) are written on the cells they lead to.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from jaxgames.core import Game, State

RED, YELLOW, BLUE, GREEN = "#d62728", "#f2c012", "#1f4e9c", "#2e7d32"
MARK = "#ff7f0e"  # the last move
CELL = 48


class Svg(str):
    """An SVG document; Jupyter shows it as a picture. `width`, `height` and `body` (its
    elements, without the enclosing <svg>) let a strip of frames place it."""

    width: float
    height: float
    body: str

    def _repr_svg_(self) -> str:
        return str(self)


def _doc(width: float, height: float, body: list[str]) -> Svg:
    inner = f'<rect width="100%" height="100%" fill="white"/>{"".join(body)}'
    svg = Svg(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif">{inner}</svg>'
    )
    svg.width, svg.height, svg.body = float(round(width)), float(round(height)), inner
    return svg


def _text(
    x: float, y: float, text: str, size: float = 12, fill: str = "black", anchor: str = "middle"
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:.0f}" fill="{fill}" '
        f'text-anchor="{anchor}" dominant-baseline="central">{html.escape(text)}</text>'
    )


def _el(tag: str, **attributes) -> str:
    """One SVG element; attribute names with _ are written with - (stroke_width)."""
    attrs = " ".join(
        f'{k.rstrip("_").replace("_", "-")}="{v:.1f}"'
        if isinstance(v, float)
        else f'{k.rstrip("_").replace("_", "-")}="{v}"'
        for k, v in attributes.items()
    )
    return f"<{tag} {attrs}/>"


def _value(v: float) -> str:
    return f"{v:+.2f}"


def _values(values, num_actions: int) -> np.ndarray | None:
    if values is None:
        return None
    out = np.asarray(values, np.float64).reshape(-1)
    if out.shape != (num_actions,):
        raise ValueError(f"values: expected one per action ({num_actions}), got {out.shape}")
    return out


def _tictactoe(board: np.ndarray, last, values) -> Svg:
    cells, body = board.reshape(9), []
    for i in (1, 2):
        body += [
            _el(
                "line",
                x1=i * CELL,
                y1=4,
                x2=i * CELL,
                y2=3 * CELL - 4,
                stroke="black",
                stroke_width=2,
            ),
            _el(
                "line",
                x1=4,
                y1=i * CELL,
                x2=3 * CELL - 4,
                y2=i * CELL,
                stroke="black",
                stroke_width=2,
            ),
        ]
    for a, v in enumerate(cells):
        x, y = (a % 3 + 0.5) * CELL, (a // 3 + 0.5) * CELL
        if v == 1:
            d = CELL * 0.3
            body.append(
                f'<path d="M{x - d},{y - d}L{x + d},{y + d}M{x + d},{y - d}L{x - d},{y + d}" '
                f'stroke="{RED}" stroke-width="5" stroke-linecap="round"/>'
            )
        elif v == 2:
            body.append(
                _el("circle", cx=x, cy=y, r=CELL * 0.3, fill="none", stroke=BLUE, stroke_width=5)
            )
        elif values is not None and np.isfinite(values[a]):
            body.append(_text(x, y, _value(values[a]), 12, "#555"))
        if last == a:
            body.append(
                f'<rect x="{x - CELL / 2 + 3}" y="{y - CELL / 2 + 3}" width="{CELL - 6}" '
                f'height="{CELL - 6}" fill="none" stroke="{MARK}" stroke-width="3"/>'
            )
    return _doc(3 * CELL, 3 * CELL, body)


def _connect_four(board: np.ndarray, last, values) -> Svg:
    rows, cols = board.shape
    top = 20 if values is not None else 0
    body = [
        f'<rect x="0" y="{top}" width="{cols * CELL}" height="{rows * CELL}" fill="{BLUE}" rx="8"/>'
    ]
    height = (board != 0).sum(axis=0)
    last_cell = None
    if last is not None and height[last] > 0:
        last_cell = (height[last] - 1, last)
    for r in range(rows):
        for c in range(cols):
            x, y = (c + 0.5) * CELL, top + (rows - 1 - r + 0.5) * CELL
            fill = {0: "white", 1: RED, 2: YELLOW}[int(board[r, c])]
            body.append(f'<circle cx="{x}" cy="{y}" r="{CELL * 0.4}" fill="{fill}"/>')
            if last_cell == (r, c):
                body.append(
                    _el(
                        "circle", cx=x, cy=y, r=CELL * 0.2, fill="none", stroke=MARK, stroke_width=4
                    )
                )
    if values is not None:
        for c in range(cols):
            if np.isfinite(values[c]):
                body.append(_text((c + 0.5) * CELL, 10, _value(values[c]), 11))
    return _doc(cols * CELL, top + rows * CELL, body)


def _othello(board: np.ndarray, last, values) -> Svg:
    size = board.shape[0]
    extra = 20 if values is not None else 0
    body = [f'<rect width="{size * CELL}" height="{size * CELL}" fill="{GREEN}"/>']
    for i in range(size + 1):
        body += [
            f'<line x1="{i * CELL}" y1="0" x2="{i * CELL}" y2="{size * CELL}" stroke="black"/>',
            f'<line x1="0" y1="{i * CELL}" x2="{size * CELL}" y2="{i * CELL}" stroke="black"/>',
        ]
    flat = board.reshape(-1)
    for a, v in enumerate(flat):
        x, y = (a % size + 0.5) * CELL, (a // size + 0.5) * CELL
        if v:
            fill = "black" if v == 1 else "white"
            body.append(
                f'<circle cx="{x}" cy="{y}" r="{CELL * 0.4}" fill="{fill}" stroke="black"/>'
            )
        elif values is not None and np.isfinite(values[a]):
            body.append(_text(x, y, _value(values[a]), 11, "white"))
        if last == a:
            body.append(f'<circle cx="{x}" cy="{y}" r="{CELL * 0.12}" fill="{MARK}"/>')
    if values is not None and np.isfinite(values[-1]):
        body.append(_text(size * CELL / 2, size * CELL + 10, f"pass {_value(values[-1])}", 12))
    return _doc(size * CELL, size * CELL + extra, body)


def _hex(board: np.ndarray, last, values) -> Svg:
    n = board.shape[0]
    r = CELL * 0.5 / math.cos(math.pi / 6)  # hexagon radius (centre to corner)
    w, h = CELL, 1.5 * r  # column step, row step
    pad = r + 6

    def centre(row, col):
        return pad + col * w + row * w / 2, pad + row * h

    def corners(x, y):
        return " ".join(
            f"{x + r * math.cos(math.pi / 6 + k * math.pi / 3):.1f},"
            f"{y + r * math.sin(math.pi / 6 + k * math.pi / 3):.1f}"
            for k in range(6)
        )

    body = []
    for row in range(n):
        for col in range(n):
            (x, y), a = centre(row, col), row * n + col
            v = int(board[row, col])
            fill = {0: "#f4f0e6", 1: RED, 2: BLUE}[v]
            stroke, width = (MARK, 4) if last == a else ("#555", 1)
            body.append(
                _el("polygon", points=corners(x, y), fill=fill, stroke=stroke, stroke_width=width)
            )
            if not v and values is not None and np.isfinite(values[a]):
                body.append(_text(x, y, _value(values[a]), 10))
    # the players' edges: first player (red) joins top and bottom, second (blue) left and right
    (x0, y0), (x1, _), (x2, y2) = centre(0, 0), centre(0, n - 1), centre(n - 1, 0)
    x3 = centre(n - 1, n - 1)[0]
    body += [
        _el("line", x1=x0 - w / 2, y1=y0 - r, x2=x1 + w / 2, y2=y0 - r, stroke=RED, stroke_width=5),
        _el("line", x1=x2 - w / 2, y1=y2 + r, x2=x3 + w / 2, y2=y2 + r, stroke=RED, stroke_width=5),
        _el(
            "line", x1=x0 - w / 2 - 2, y1=y0, x2=x2 - w / 2 - 2, y2=y2, stroke=BLUE, stroke_width=5
        ),
        _el(
            "line", x1=x1 + w / 2 + 2, y1=y0, x2=x3 + w / 2 + 2, y2=y2, stroke=BLUE, stroke_width=5
        ),
    ]
    width = 2 * pad + (n - 1) * w + (n - 1) * w / 2
    return _doc(width, 2 * pad + (n - 1) * h, body)


def _heaps(board: np.ndarray, size: int, last, values, names) -> Svg:
    stick, gap = 10, 6
    width = 70 + size * (stick + gap)
    body = []
    for h, count in enumerate(board):
        y = 20 + h * 34
        body.append(_text(30, y + 12, f"heap {h}", 12))
        for k in range(int(count)):
            x = 70 + k * (stick + gap)
            body.append(
                f'<rect x="{x}" y="{y}" width="{stick}" height="24" rx="3" fill="#8d6e63"/>'
            )
    lines = []
    if last is not None:
        lines.append(f"last move: {names[last]}")
    if values is not None:
        best = [(v, a) for a, v in enumerate(values) if np.isfinite(v)]
        best.sort(reverse=True)
        lines += [f"{names[a]}: {_value(v)}" for v, a in best[:6]]
    for i, line in enumerate(lines):
        fill = MARK if i == 0 and last is not None else "black"
        body.append(_text(8, 30 + len(board) * 34 + i * 16, line, 11, fill, "start"))
    return _doc(max(width, 220), 30 + len(board) * 34 + 16 * len(lines) + 6, body)


_TILES = [
    "#cdc1b4",
    "#eee4da",
    "#ede0c8",
    "#f2b179",
    "#f59563",
    "#f67c5f",
    "#f65e3b",
    "#edcf72",
    "#edcc61",
    "#edc850",
    "#edc53f",
    "#edc22e",
    "#3c3a32",
    "#3c3a32",
    "#3c3a32",
    "#3c3a32",
    "#3c3a32",
    "#3c3a32",
]


def _2048(board: np.ndarray, values, names) -> Svg:
    n, body = (
        board.shape[0],
        [f'<rect width="{4 * CELL + 10}" height="{4 * CELL + 10}" fill="#bbada0" rx="6"/>'],
    )
    for r in range(n):
        for c in range(n):
            e = int(board[r, c])
            x, y = 5 + c * CELL, 5 + r * CELL
            body.append(
                _el(
                    "rect",
                    x=x + 3,
                    y=y + 3,
                    width=CELL - 6,
                    height=CELL - 6,
                    rx=4,
                    fill=_TILES[min(e, 17)],
                )
            )
            if e:
                tile = 2**e
                size = 18 if tile < 100 else 14 if tile < 10_000 else 11
                body.append(
                    _text(
                        x + CELL / 2,
                        y + CELL / 2,
                        str(tile),
                        size,
                        "#776e65" if e <= 2 else "white",
                    )
                )
    extra = []
    if values is not None:
        extra = [f"{names[a]} {_value(v)}" for a, v in enumerate(values) if np.isfinite(v)]
        body.append(_text(2 * CELL + 5, 4 * CELL + 22, "   ".join(extra), 11))
    return _doc(4 * CELL + 10, 4 * CELL + 10 + (24 if extra else 0), body)


def render_svg(game: Game, state: State, last_action: int | None = None, values: Any = None) -> Svg:
    """An SVG picture of one (unbatched) state of `game`.

    Args:
        game: any registered game.
        state: an unbatched state.
        last_action: the move that led to it (ringed), if known.
        values: float[num_actions], a value per move (an agent's, or perfect play's) written on
            the cell each move takes; NaN for illegal moves.

    Raises:
        ValueError: a batched state, or values of the wrong length.
    """
    board = np.asarray(state.board)
    if board.shape != tuple(game.board_shape):
        raise ValueError(
            f"render_svg takes one unbatched {game.name} state (board {game.board_shape}), "
            f"got a board of shape {board.shape}"
        )
    vals = _values(values, game.num_actions)
    last = None if last_action is None else int(last_action)
    if game.name == "tictactoe":
        return _tictactoe(board, last, vals)
    if game.name == "connect_four":
        return _connect_four(board, last, vals)
    if game.name == "othello":
        return _othello(board, last, vals)
    if game.name == "hex":
        return _hex(board, last, vals)
    if game.name in ("nim", "nim3p"):
        return _heaps(board, dict(game.options)["size"], last, vals, game.action_names)
    if game.name == "2048":
        return _2048(board, vals, game.action_names)
    raise ValueError(f"no SVG picture for {game!r}")


def render_game_svg(
    game: Game, states: Sequence[State], actions: Sequence[int], columns: int = 6
) -> Svg:
    """A whole game as a strip of frames: `states[0]` the start, `states[k]` after
    `actions[k - 1]` (that move ringed), `columns` frames a row, each numbered."""
    frames = [render_svg(game, s, None if k == 0 else actions[k - 1]) for k, s in enumerate(states)]
    labels = ["start"] + [f"{k}: {game.action_names[a]}" for k, a in enumerate(actions, 1)]
    return tile(frames, columns, labels[: len(frames)])


def tile(frames: Sequence[Svg], columns: int, labels: Sequence[str] | None = None) -> Svg:
    """Pictures side by side, `columns` a row, each with its label above it if given."""
    w = max(f.width for f in frames)
    h = max(f.height for f in frames) + (18 if labels is not None else 0)
    body = []
    for k, frame in enumerate(frames):
        x, y = (k % columns) * (w + 8), (k // columns) * (h + 8)
        inner = (
            frame.body
            if labels is None
            else f'{_text(w / 2, 9, labels[k], 11)}<g transform="translate(0,18)">{frame.body}</g>'
        )
        body.append(f'<g transform="translate({x},{y})">{inner}</g>')
    rows = (len(frames) + columns - 1) // columns
    return _doc(min(len(frames), columns) * (w + 8), rows * (h + 8), body)


def replay(game: Game, moves: Sequence[int]) -> list[State]:
    """The states of a deterministic game from the start through `moves` (host-side)."""
    import jax

    from jaxgames.core import checked_step

    if game.stochastic:
        raise ValueError(f"{game.name} has chance moves: its states do not follow from the moves")
    states = [game.init(jax.random.key(0))]
    for m in moves:
        states.append(checked_step(game, states[-1], int(m)))
    return states
