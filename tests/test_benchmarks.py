"""The benchmark scripts run: the GPU benchmark's CPU mode end to end."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]


def test_the_gpu_benchmark_runs_on_cpu_at_small_sizes(tmp_path):
    """`bash benchmarks/gpu.sh --cpu`: the device line, the throughput table (one update per
    step and sub-batches), a training run of the GPU preset with background evaluations, and
    when it first reached its target."""
    env = {**os.environ, "PYTHON": sys.executable, "GPU_RUN_DIR": str(tmp_path / "run")}
    out = subprocess.run(
        ["bash", str(REPO / "benchmarks" / "gpu.sh"), "--cpu"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout
    assert "device: cpu" in text
    rows = [line.split() for line in text.splitlines() if line.strip().startswith("64 ")]
    assert [r[1] for r in rows] == ["0", "16"], text
    assert all(float(r[3].replace(",", "")) > 0 for r in rows), text
    assert "first at or above 0.5 points against random" in text, text
    assert "wall time of the whole command" in text
    assert (tmp_path / "run" / "metrics.jsonl").exists()
