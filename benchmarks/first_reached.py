"""When a run's evaluations first reached a score: `python benchmarks/first_reached.py
RUN/metrics.jsonl --points 0.985` prints every evaluation (games, training seconds, points: a
draw worth half, as GBG reports) and the first at or above the target, or that none was."""

from __future__ import annotations

import argparse
import json
import pathlib
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=sys.argv[0], description=__doc__.splitlines()[0])
    parser.add_argument("metrics", type=pathlib.Path)
    parser.add_argument("--points", type=float, required=True)
    args = parser.parse_args(argv)
    lines = args.metrics.read_text().splitlines()
    evals = [r for r in map(json.loads, lines) if r.get("kind") == "eval"]
    if not evals:
        print(f"{args.metrics}: no evaluation records")
        return 1
    print(f"{'games':>11}{'train s':>9}{'points':>8}  W/D/L")
    first = None
    for r in sorted(evals, key=lambda r: r["train_games"]):
        points = r["points"]
        print(
            f"{r['train_games']:>11,}{r['train_seconds']:>9.0f}{points:>8.3f}  "
            f"{r['wins']}/{r['draws']}/{r['losses']}"
        )
        if first is None and points >= args.points:
            first = (r, points)
    if first is None:
        print(f"never reached {args.points} points against {evals[0]['opponent']}")
        return 0
    r, points = first
    print(
        f"first at or above {args.points} points against {r['opponent']}: {points:.3f} after "
        f"{r['train_games']:,} games, {r['train_seconds']:.0f} s of training"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
