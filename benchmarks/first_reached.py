"""When runs' evaluations first reached a score, in games, training time and wall time.

    python benchmarks/first_reached.py RUN/metrics.jsonl [RUN2/metrics.jsonl ...] \
        --points 0.985 [--plot curve.png]

For each run it prints every evaluation (games, training seconds, wall seconds since the run
began, compiling and evaluations included, where the records hold it; points: a draw worth
half, as GBG reports) and the first at or above the target, or that none was. With several
runs, the mean of the runs' points at each game count they share, and when that mean first
reached the target. `--plot` draws points against wall time, one line per run, the target
and each run's first crossing marked (a dotted line, its time in the legend).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys


def evaluations(metrics: pathlib.Path) -> list[dict]:
    """The evaluation records of a run's metrics.jsonl, in game order."""
    lines = metrics.read_text().splitlines()
    evals = [r for r in map(json.loads, lines) if r.get("kind") == "eval"]
    return sorted(evals, key=lambda r: r["train_games"])


def first_at(evals: list[dict], points: float) -> dict | None:
    """The first evaluation at or above `points`, or None."""
    return next((r for r in evals if r["points"] >= points), None)


def _wall(r: dict) -> str:
    return f"{r['wall_seconds']:.0f}" if r.get("wall_seconds") is not None else "-"


def report(metrics: pathlib.Path, points: float) -> list[dict]:
    """Prints one run's evaluations and its first crossing; returns its evaluations."""
    evals = evaluations(metrics)
    print(f"{metrics}")
    if not evals:
        print("  no evaluation records")
        return evals
    print(f"{'games':>11}{'train s':>9}{'wall s':>8}{'points':>8}  W/D/L")
    for r in evals:
        print(
            f"{r['train_games']:>11,}{r['train_seconds']:>9.0f}{_wall(r):>8}"
            f"{r['points']:>8.3f}  {r['wins']}/{r['draws']}/{r['losses']}"
        )
    r = first_at(evals, points)
    if r is None:
        print(f"never reached {points} points against {evals[0]['opponent']}")
    else:
        print(
            f"first at or above {points} points against {r['opponent']}: {r['points']:.3f} "
            f"after {r['train_games']:,} games, {r['train_seconds']:.0f} s of training, "
            f"{_wall(r)} s of wall time"
        )
    return evals


def mean_over_runs(runs: list[list[dict]], points: float) -> list[tuple]:
    """Prints the runs' mean points at every game count that each run evaluated near (the
    same eval.every: counts within one chunk of each other), and its first crossing; returns
    the rows (games, wall seconds when the last run knew its points, mean points)."""
    rows = min(len(e) for e in runs)
    means = []
    print(f"mean of {len(runs)} runs")
    print(f"{'games':>11}{'wall s':>8}{'points':>8}  per run")
    first = None
    for i in range(rows):
        at = [e[i] for e in runs]
        mean = sum(r["points"] for r in at) / len(at)
        walls = [r.get("wall_seconds") for r in at]
        wall = max(walls) if None not in walls else None  # when the last run knew it
        games = max(r["train_games"] for r in at)
        per = " ".join(f"{r['points']:.3f}" for r in at)
        shown = f"{wall:.0f}" if wall is not None else "-"
        print(f"{games:>11,}{shown:>8}{mean:>8.3f}  {per}")
        means.append((games, wall, mean))
        if first is None and mean >= points:
            first = (games, wall, mean)
    if first is None:
        print(f"the mean never reached {points} points")
    else:
        games, wall, mean = first
        shown = f"{wall:.0f} s" if wall is not None else "an unknown wall time"
        print(f"the mean first at or above {points}: {mean:.3f} after {games:,} games, {shown}")
    return means


def plot(
    runs: dict[str, list[dict]], points: float, out: pathlib.Path, means: list[tuple] = ()
) -> None:
    """Points against wall time, one line per run (and the runs' mean, where given), the
    target and first crossings marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.5, 4))
    lines = []  # (label, [(wall seconds, points)], style)
    for name, evals in runs.items():
        timed = [r for r in evals if r.get("wall_seconds") is not None]
        if not timed:
            raise ValueError(f"{name}: its records hold no wall_seconds to plot against")
        lines.append((name, [(r["wall_seconds"], r["points"]) for r in timed], {"marker": "o"}))
    if means and all(wall is not None for _, wall, _ in means):
        xy = [(wall, mean) for _, wall, mean in means]
        style = {"color": "black", "linestyle": "-.", "marker": "s"}
        lines.append((f"mean of {len(runs)}", xy, style))
    for name, xy, style in lines:
        wall = next((w for w, p in xy if p >= points), None)
        # the first crossing's time goes in the legend, where no two can overlap
        label = name if wall is None else f"{name}: {points} at {wall / 60:.1f} min"
        (line,) = ax.plot([w / 60 for w, _ in xy], [p for _, p in xy], label=label, **style)
        if wall is not None:
            ax.axvline(wall / 60, color=line.get_color(), linestyle=":")
    ax.axhline(points, color="grey", linestyle="--", label=f"{points}")
    ax.set_xlabel("wall time (minutes, evaluations included)")
    ax.set_ylabel("points against the opponent (a draw is half)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"wrote {out}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=sys.argv[0], description=__doc__.splitlines()[0])
    parser.add_argument("metrics", type=pathlib.Path, nargs="+")
    parser.add_argument("--points", type=float, required=True)
    parser.add_argument("--plot", type=pathlib.Path, default=None)
    args = parser.parse_args(argv)
    runs = {str(m.parent.name or m): report(m, args.points) for m in args.metrics}
    if not all(runs.values()):
        return 1
    means = mean_over_runs(list(runs.values()), args.points) if len(runs) > 1 else []
    if args.plot is not None:
        plot(runs, args.points, args.plot, means)
    return 0


if __name__ == "__main__":
    sys.exit(main())
