"""Step-size and exploration schedules, as pure functions of the number of games played.

| kind          | value after g games                                                  |
|---------------|----------------------------------------------------------------------|
| `constant`    | start                                                                |
| `linear`      | start -> end linearly over `games` games, then end (GBG's epsilon)   |
| `exponential` | start * (end / start) ** (g / games), then end (GBG's alpha)         |
| `anneal`      | max(end, start * factor ** g): the FIAR notes' per-game annealing         |
| `inverse`     | start / (1 + g / games): 1/t-style decay, halved after `games` games |

`games = 0` means "the length of the training run" (filled in by `resolve`). With `offset`, g
counts the games played since game `offset`: a run resumed at game `offset` can start a new
schedule from there (the FIAR notes annealed epsilon by 0.99999 per game for 1M games, then
continued with 0.9999 from the value reached: `anneal, start=0.9 * 0.99999**1e6, factor=0.9999,
offset=1000000`).
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp

KINDS = ("constant", "linear", "exponential", "anneal", "inverse")


@dataclasses.dataclass(frozen=True)
class Schedule:
    """A schedule; see the module docstring for the kinds."""

    kind: str = "constant"
    start: float = 0.0
    end: float = 0.0
    games: int = 0
    factor: float = 1.0
    offset: int = 0

    def __post_init__(self):
        bad = [
            f"{k}={v}"
            for k, v in (("start", self.start), ("end", self.end), ("factor", self.factor))
            if not math.isfinite(v)
        ]
        if bad:
            raise ValueError(f"schedule {', '.join(bad)}: expected finite numbers")
        if self.kind not in KINDS:
            raise ValueError(f"schedule kind {self.kind!r}; expected one of {', '.join(KINDS)}")
        if self.kind == "exponential" and (self.start <= 0 or self.end <= 0):
            raise ValueError(
                f"an exponential schedule needs start > 0 and end > 0, got {self.start}, {self.end}"
            )
        if self.kind == "anneal" and not 0 < self.factor <= 1:
            raise ValueError(f"anneal factor must be in (0, 1], got {self.factor}")
        if self.games < 0 or self.offset < 0:
            raise ValueError(
                f"schedule games and offset must be >= 0, got {self.games}, {self.offset}"
            )

    def __str__(self) -> str:
        if self.kind == "constant":
            return f"{self.start:g}"
        if self.kind == "anneal":
            return f"{self.start:g} * {self.factor:g}^games (floor {self.end:g})"
        if self.kind == "inverse":
            return f"{self.start:g} / (1 + games / {self.games:,})"
        over = f" over {self.games:,} games" if self.games else ""
        return f"{self.start:g} -> {self.end:g} ({self.kind}{over})"

    def resolve(self, run_games: int) -> Schedule:
        """This schedule with `games = 0` replaced by the run's length (after `offset`)."""
        return dataclasses.replace(self, games=self.games or max(run_games - self.offset, 1))

    def __call__(self, games_played: jax.typing.ArrayLike) -> jax.Array:
        """float32 value after `games_played` games (jittable; call `resolve` first)."""
        g = jnp.maximum(jnp.asarray(games_played, jnp.float32) - self.offset, 0.0)
        frac = jnp.clip(g / max(self.games, 1), 0.0, 1.0)
        if self.kind == "constant":
            value = jnp.float32(self.start)
        elif self.kind == "linear":
            value = self.start + (self.end - self.start) * frac
        elif self.kind == "exponential":
            value = self.start * (self.end / self.start) ** frac
        elif self.kind == "anneal":
            # factor ** g in float32 loses 1% by g = 1e6; the log is taken in double precision.
            value = jnp.maximum(self.end, self.start * jnp.exp(g * math.log(self.factor)))
        else:
            value = self.start / (1.0 + g / max(self.games, 1))
        return jnp.asarray(value, jnp.float32)
