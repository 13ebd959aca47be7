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


class Hex:
    """Hex on a rhombus; wins found by a breadth-first search from the owner's first edge."""

    def __init__(self, size: int):
        self.size = size
        self.grid = [[0] * size for _ in range(size)]
        self.player = 0
        self.over = False
        self.rewards = [0.0, 0.0]

    def num_actions(self) -> int:
        return self.size * self.size

    def legal(self) -> list[int]:
        if self.over:
            return []
        n = self.size
        return [r * n + c for r in range(n) for c in range(n) if self.grid[r][c] == 0]

    def board(self) -> np.ndarray:
        return np.array(self.grid, dtype=np.int8)

    def _connected(self, stone: int) -> bool:
        n = self.size
        # first player: row 0 -> row n-1; second player: column 0 -> column n-1
        if stone == 1:
            frontier = [(0, c) for c in range(n) if self.grid[0][c] == 1]
        else:
            frontier = [(r, 0) for r in range(n) if self.grid[r][0] == 2]
        seen = set(frontier)
        while frontier:
            r, c = frontier.pop()
            if (stone == 1 and r == n - 1) or (stone == 2 and c == n - 1):
                return True
            for dr, dc in ((-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0)):
                rr, cc = r + dr, c + dc
                inside = 0 <= rr < n and 0 <= cc < n
                if inside and (rr, cc) not in seen and self.grid[rr][cc] == stone:
                    seen.add((rr, cc))
                    frontier.append((rr, cc))
        return False

    def play(self, action: int) -> None:
        if self.over:
            self.rewards = [0.0, 0.0]
            return
        mover = self.player
        self.player = 1 - mover
        if action not in self.legal():
            self.over = True
            self.rewards = [1.0, 1.0]
            self.rewards[mover] = -1.0
            return
        r, c = divmod(action, self.size)
        self.grid[r][c] = mover + 1
        if self._connected(mover + 1):
            self.over = True
            self.rewards = [-1.0, -1.0]
            self.rewards[mover] = 1.0
        else:
            self.rewards = [0.0, 0.0]


class Othello:
    """8x8 Othello; moves found by walking each direction cell by cell."""

    def __init__(self):
        self.grid = [[0] * 8 for _ in range(8)]
        self.grid[3][3] = self.grid[4][4] = 2
        self.grid[3][4] = self.grid[4][3] = 1
        self.player = 0
        self.over = False
        self.rewards = [0.0, 0.0]

    def num_actions(self) -> int:
        return 65

    def _flips(self, player: int, r: int, c: int) -> list[tuple[int, int]]:
        if self.grid[r][c] != 0:
            return []
        own, opp = player + 1, 2 - player
        out = []
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                if dr == dc == 0:
                    continue
                run = []
                rr, cc = r + dr, c + dc
                while 0 <= rr < 8 and 0 <= cc < 8 and self.grid[rr][cc] == opp:
                    run.append((rr, cc))
                    rr, cc = rr + dr, cc + dc
                if run and 0 <= rr < 8 and 0 <= cc < 8 and self.grid[rr][cc] == own:
                    out += run
        return out

    def _moves(self, player: int) -> list[int]:
        return [r * 8 + c for r in range(8) for c in range(8) if self._flips(player, r, c)]

    def legal(self) -> list[int]:
        if self.over:
            return []
        return self._moves(self.player) or [64]

    def board(self) -> np.ndarray:
        return np.array(self.grid, dtype=np.int8)

    def play(self, action: int) -> None:
        if self.over:
            self.rewards = [0.0, 0.0]
            return
        mover = self.player
        self.player = 1 - mover
        if action not in self.legal_for(mover):
            self.over = True
            self.rewards = [1.0, 1.0]
            self.rewards[mover] = -1.0
            return
        if action != 64:
            r, c = divmod(action, 8)
            for rr, cc in self._flips(mover, r, c):
                self.grid[rr][cc] = mover + 1
            self.grid[r][c] = mover + 1
        self.rewards = [0.0, 0.0]
        if not self._moves(0) and not self._moves(1):
            self.over = True
            black = sum(v == 1 for row in self.grid for v in row)
            white = sum(v == 2 for row in self.grid for v in row)
            if black != white:
                self.rewards = [1.0, -1.0] if black > white else [-1.0, 1.0]

    def legal_for(self, player: int) -> list[int]:
        return self._moves(player) or [64]


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
    if name == "hex":
        return Hex(options["size"])
    if name == "othello":
        return Othello()
    raise KeyError(name)
