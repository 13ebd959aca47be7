"""The learning curve of a run folder's metrics."""

from __future__ import annotations

import json

import pytest

from jaxgames import plots


def test_the_curve_draws_evaluations_without_an_interval(tmp_path):
    """An evaluation of one game per seat has no interval (NaN, which the metrics file holds
    as null); the curve draws it without an error bar."""
    records = [
        {"kind": "train", "train_games": 10},
        {"kind": "eval", "train_games": 10, "train_seconds": 1.0, "score": 0.5, "ci95": 0.1,
         "win_rate": 0.7},
        {"kind": "eval", "train_games": 20, "train_seconds": 2.0, "score": 1.0, "ci95": None,
         "win_rate": 1.0},
    ]  # fmt: skip
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text("".join(json.dumps(r) + "\n" for r in records) + '{"kind": "eval", '
                       '"train_games": 30, "train_seconds": 3.0, "score": 0.0, "ci95": NaN, '
                       '"win_rate": 0.5}\n')  # fmt: skip
    out = plots.learning_curve(metrics, tmp_path / "curve.png")
    assert out.read_bytes()[:4] == b"\x89PNG"
    metrics.write_text(json.dumps(records[0]) + "\n")
    with pytest.raises(ValueError, match="holds no evaluation records to plot"):
        plots.learning_curve(metrics, tmp_path / "none.png")
