"""Plain-Python reference rules, written independently of jaxgames, for cross-checks.

Deliberately naive: win detection scans the whole board, no tables are shared with the library.
Each reference game exposes `board()` (a NumPy array in the library's encoding), `legal()`,
`play(action)`, `player`, `over` and `rewards`; an illegal action forfeits (mover loses).
"""

from __future__ import annotations

import functools

import numpy as np


@functools.cache
def _all_lines(rows: int, cols: int) -> list[list[tuple[int, int]]]:
    """Every full row, column and diagonal of the grid, as lists of (row, col)."""
    out = [[(r, c) for c in range(cols)] for r in range(rows)]
    out += [[(r, c) for r in range(rows)] for c in range(cols)]
    for start in range(-rows, cols + rows):
        out.append([(r, start + r) for r in range(rows) if 0 <= start + r < cols])
        out.append([(r, start - r) for r in range(rows) if 0 <= start - r < cols])
    return [line for line in out if line]


class KInARow:
    """m,n,k games: TicTacToe (no gravity) and Connect Four (gravity, row 0 at the bottom)."""

    def __init__(self, rows: int, cols: int, connect: int, gravity: bool):
        self.rows, self.cols, self.connect, self.gravity = rows, cols, connect, gravity
        self.grid = [[0] * cols for _ in range(rows)]
        self.player = 0
        self.over = False
        self.rewards = [0.0, 0.0]
        self.moves = 0

    def num_actions(self) -> int:
        return self.cols if self.gravity else self.rows * self.cols

    def legal(self) -> list[int]:
        if self.over:
            return []
        if self.gravity:
            return [c for c in range(self.cols) if self.grid[self.rows - 1][c] == 0]
        return [
            r * self.cols + c
            for r in range(self.rows)
            for c in range(self.cols)
            if self.grid[r][c] == 0
        ]

    def board(self) -> np.ndarray:
        return np.array(self.grid, dtype=np.int8)

    def _won(self, stone: int) -> bool:
        target = str(stone) * self.connect
        return any(
            target in "".join(str(self.grid[r][c]) for r, c in line)
            for line in _all_lines(self.rows, self.cols)
        )

    def play(self, action: int) -> None:
        if self.over:
            self.rewards = [0.0, 0.0]
            return
        mover = self.player
        self.moves += 1
        self.player = 1 - mover
        if action not in self.legal():
            self.over = True
            self.rewards = [1.0, 1.0]
            self.rewards[mover] = -1.0
            return
        if self.gravity:
            r = next(r for r in range(self.rows) if self.grid[r][action] == 0)
            c = action
        else:
            r, c = divmod(action, self.cols)
        self.grid[r][c] = mover + 1
        if self._won(mover + 1):
            self.over = True
            self.rewards = [-1.0, -1.0]
            self.rewards[mover] = 1.0
        elif all(v != 0 for row in self.grid for v in row):
            self.over = True
            self.rewards = [0.0, 0.0]
        else:
            self.rewards = [0.0, 0.0]


class TicTacToe(KInARow):
    def __init__(self):
        super().__init__(3, 3, 3, gravity=False)


class ConnectFour(KInARow):
    def __init__(self, rows: int = 6, cols: int = 7, connect: int = 4):
        super().__init__(rows, cols, connect, gravity=True)


class Nim:
    """Nim for N players; two players: last taker wins; three: GBG's 0 / 1 / 0.2 rule."""

    def __init__(self, heaps: int, size: int, max_take: int, players: int):
        self.heaps = [size] * heaps
        self.max_take, self.players = max_take, players
        self.player = 0
        self.over = False
        self.rewards = [0.0] * players
        self.moves = 0

    def num_actions(self) -> int:
        return len(self.heaps) * self.max_take

    def legal(self) -> list[int]:
        if self.over:
            return []
        return [
            h * self.max_take + t - 1
            for h in range(len(self.heaps))
            for t in range(1, self.max_take + 1)
            if self.heaps[h] >= t
        ]

    def board(self) -> np.ndarray:
        return np.array(self.heaps, dtype=np.int8)

    def _final(self, taker: int) -> list[float]:
        if self.players == 2:
            return [1.0 if p == taker else -1.0 for p in range(2)]
        out = [0.0] * self.players
        out[(taker + 1) % 3] = 1.0
        out[(taker + 2) % 3] = 0.2
        return out

    def play(self, action: int) -> None:
        if self.over:
            self.rewards = [0.0] * self.players
            return
        mover = self.player
        self.moves += 1
        self.player = (mover + 1) % self.players
        if action not in self.legal():  # forfeit: two players, the mover loses; three, the
            self.over = True  # mover is scored as if it had taken the last item
            self.rewards = [-1.0, 1.0] if mover == 0 else [1.0, -1.0]
            if self.players == 3:
                self.rewards = self._final(mover)
            return
        heap, take = divmod(action, self.max_take)
        self.heaps[heap] -= take + 1
        if sum(self.heaps) == 0:
            self.over = True
            self.rewards = self._final(mover)
        else:
            self.rewards = [0.0] * self.players


def for_game(name: str, options: dict[str, int]):
    """A fresh reference game for a registry name and resolved options."""
    if name == "tictactoe":
        return TicTacToe()
    if name == "connect_four":
        return ConnectFour(options["rows"], options["cols"], options["connect"])
    if name == "nim":
        return Nim(options["heaps"], options["size"], options["max_take"], players=2)
    if name == "nim3p":
        return Nim(options["heaps"], options["size"], options["size"], players=3)
    raise KeyError(name)
