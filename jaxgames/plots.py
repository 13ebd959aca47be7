"""Learning curves from a run's metrics (matplotlib, headless)."""

from __future__ import annotations

import json
import pathlib


def learning_curve(metrics: str | pathlib.Path, out: str | pathlib.Path) -> pathlib.Path:
    """Draws the evaluations of a run (score and win rate, with 95% intervals) against training
    games and against training wall time, to a PNG at `out`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [
        json.loads(line) for line in pathlib.Path(metrics).read_text().splitlines() if line.strip()
    ]
    evals = [r for r in records if r.get("kind") == "eval"]
    if not evals:
        raise ValueError(f"{metrics} holds no evaluation records to plot")
    games = [r["train_games"] for r in evals]
    seconds = [r["train_seconds"] for r in evals]
    score = [r["score"] for r in evals]
    # no interval (NaN, written as null) for evaluations of one game per seat
    ci = [
        r["ci95"] if isinstance(r.get("ci95"), float) and r["ci95"] == r["ci95"] else 0.0
        for r in evals
    ]
    win = [r["win_rate"] for r in evals]
    opponent = evals[-1].get("opponent", "opponent")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, x, label in (
        (axes[0], games, "training games"),
        (axes[1], seconds, "training time (s)"),
    ):
        ax.errorbar(x, score, yerr=ci, marker="o", capsize=3, label="score (mean reward)")
        ax.plot(x, win, marker="s", linestyle="--", label="win rate")
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"against {opponent}")
    axes[0].legend(loc="lower right")
    fig.suptitle(f"{pathlib.Path(metrics).parent.name}: evaluation against {opponent}")
    fig.tight_layout()
    out = pathlib.Path(out)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
