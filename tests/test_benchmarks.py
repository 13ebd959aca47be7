"""The benchmark scripts run: the GPU benchmark's CPU mode end to end."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import jax.numpy as jnp
import numpy as np
import pytest

from tests.helpers import REPO, script_module


@pytest.mark.integration  # 35-60 s: the whole GPU script (throughput table, a training run)
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


def test_first_reached_reports_each_run_the_mean_of_runs_and_plots_wall_time(tmp_path, capsys):
    """`benchmarks/first_reached.py`: each run's first evaluation at the target (by points,
    with its wall time), the first game count at which the runs' mean reached it (not the
    first run to reach it), and a plot against wall time."""
    import json

    def run(name, points, walls):
        folder = tmp_path / name
        folder.mkdir()
        rows = [{"kind": "train", "train_games": 50, "train_seconds": 1.0}]
        rows += [
            {
                "kind": "eval",
                "train_games": 100 * (i + 1),
                "train_seconds": 10.0 * (i + 1),
                "wall_seconds": w,
                "points": p,
                "wins": 1,
                "draws": 0,
                "losses": 0,
                "opponent": "perfect",
            }
            for i, (p, w) in enumerate(zip(points, walls, strict=True))
        ]
        (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        return folder / "metrics.jsonl"

    a = run("a", [0.5, 0.99, 0.98, 1.0], [15, 30, 45, 60])
    b = run("b", [0.9, 0.97, 0.99, 0.99], [16, 31, 47, 62])
    module = script_module("benchmarks/first_reached.py")
    assert (
        module.main([str(a), str(b), "--points", "0.985", "--plot", str(tmp_path / "c.png")]) == 0
    )
    out = capsys.readouterr().out
    assert "0.990 after 200 games, 20 s of training, 30 s of wall time" in out  # run a
    assert "0.990 after 300 games, 30 s of training, 47 s of wall time" in out  # run b
    # the mean: 0.700, 0.980, 0.985 (at 300 games, known when the later run knew it: 47 s)
    assert "the mean first at or above 0.985: 0.985 after 300 games, 47 s" in out
    assert (tmp_path / "c.png").stat().st_size > 10_000
    never = run("never", [0.5], [9])
    assert module.main([str(never), "--points", "0.985"]) == 0
    assert "never reached 0.985 points against perfect" in capsys.readouterr().out


def test_step_profile_counts_a_loops_operations_once():
    """Self times: a loop's body runs inside the loop's event on the same thread and is taken
    off the loop's time (nested twice here), an operation on another thread that overlaps in
    time is not, and the executor's own events are not operations."""
    x = lambda name, ts, dur, tid=1: {
        "ph": "X",
        "name": name,
        "ts": ts,
        "dur": dur,
        "pid": 7,
        "tid": tid,
    }
    events = [
        x("while.1", 0, 100),
        x("fusion.body", 10, 30),
        x("fusion.inner", 15, 10),
        x("fusion.body", 50, 30),
        x("scatter.2", 120, 40),
        x("scatter.2", 5, 90, tid=2),  # beside the loop, on the other core
        x("ThunkExecutor::Execute", 0, 200),
        {"ph": "M", "name": "thread_name", "pid": 7, "tid": 1},
    ]
    total, calls = script_module("benchmarks/step_profile.py").self_times(events)
    assert dict(total) == {"while.1": 40, "fusion.body": 50, "fusion.inner": 10, "scatter.2": 130}
    assert dict(calls) == {"while.1": 1, "fusion.body": 2, "fusion.inner": 1, "scatter.2": 2}
    assert sum(total.values()) == 100 + 40 + 90  # each thread's busy time, once


def test_step_profile_lists_the_costliest_compiled_operations(capsys):
    """`benchmarks/step_profile.py --thunks N`: N operations from a profiler trace of the
    whole step, costliest first, with shares of the operations' time that add up to at most
    one and a cost per move."""
    import dataclasses
    import re

    from jaxgames import presets
    from jaxgames.builders import make_learner

    module = script_module("benchmarks/step_profile.py")
    config = presets.load("tictactoe-td-farl")
    # short chunks: the 20 warm-up chunks and the 2 traced ones are then a few thousand moves
    train_config = dataclasses.replace(config.train, batch_size=8, chunk_steps=16)
    module._thunks(make_learner(dataclasses.replace(config, train=train_config)), 4, chunks=2)
    out = capsys.readouterr().out
    assert "compiled operations of 2 chunks" in out, out
    rows = [line.split() for line in out.splitlines()[2:] if line.strip()]
    assert len(rows) == 4, out
    ms = [float(r[-4]) for r in rows]
    shares = [float(r[-2].rstrip("%")) / 100 for r in rows]
    assert ms == sorted(ms, reverse=True) and 0 < sum(shares) <= 1.0 + 1e-3, out
    assert all(int(r[-3]) >= 1 and float(r[-1].replace(",", "")) > 0 for r in rows), out
    assert not any(re.match(r"^(\$|ThunkExecutor)", r[0]) for r in rows), out


def test_ntuple_update_benchmark_times_two_checkouts_and_compares_their_weights(tmp_path):
    """`benchmarks/ntuple_update.py --against DIR`: a row per version, the ratio, and whether
    both left the same tables (this checkout against itself: yes); a folder that is not a
    checkout is refused in one line."""
    script = str(REPO / "benchmarks" / "ntuple_update.py")

    def bench(against):
        args = [sys.executable, script, "--against", str(against)]
        args += ["--rows", "16", "--rounds", "2", "--calls", "2"]
        return subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=REPO)

    out = bench(REPO)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines[2].split()[:2] == ["this", "checkout"] and lines[2].split()[-1] == "1.000"
    assert lines[3].startswith(f"--against {REPO}")
    assert lines[4] == "same weights and TCL accumulators after 5 calls: yes"
    bad = bench(tmp_path)
    assert bad.returncode != 0
    assert bad.stderr.strip().splitlines()[-1] == (
        f"--against {tmp_path}: no jaxgames/approximators/ntuple.py there; "
        "expected a jaxgames checkout"
    )


def test_large_batch_runs_the_preset_at_the_batch_sub_batch_and_openings_asked_for():
    """`benchmarks/large_batch.py`'s run config: the preset at the given B, sub-batch, seed and
    game count, epsilon kept on the preset's own course (its 6M games, not the short run's),
    no weight mean unless `--average-from` asks for one (the agent is the final weights), and
    `--opening-moves` replacing the preset's random opening moves only where given, the step
    size scaled by `--alpha-scale` and refused where that is not positive."""
    from jaxgames import presets

    module = script_module("benchmarks/large_batch.py")
    preset = presets.load("connect4-td-farl")
    config = module.run_config(preset, 4096, 256, 3, 20_000, opening_moves=2)
    assert config.train.batch_size == 4096 and config.train.seed == 3
    assert config.train.games == 20_000 and config.train.average_from is None
    assert config.algorithm.sub_batch == 256 and config.algorithm.random_opening_moves == 2
    assert config.algorithm.epsilon.games == preset.train.games == 6_000_000
    assert config.approximator == preset.approximator
    kept = module.run_config(preset, 256, 0, 0, 20_000)
    assert kept.algorithm.random_opening_moves == preset.algorithm.random_opening_moves == 0
    assert preset.train.average_from is not None and kept.train.average_from is None
    mean = module.run_config(preset, 16384, 256, 1, 4_000_000, average_from=1_000_000)
    assert mean.train.average_from == 1_000_000 and mean.train.games == 4_000_000
    assert mean.algorithm.alpha == preset.algorithm.alpha  # the step size kept by default
    half = module.run_config(preset, 16384, 256, 0, 100, alpha_scale=0.5).algorithm.alpha
    assert half.start == preset.algorithm.alpha.start / 2 and half.kind == "constant"
    with pytest.raises(ValueError, match=r"alpha_scale 0\.0: expected a number > 0"):
        module.run_config(preset, 256, 0, 0, 100, alpha_scale=0.0)
    fiar = presets.load("fiar-ntuple-sarsa")
    assert module.run_config(fiar, 64, 0, 0, 100).algorithm.random_opening_moves == 2
    from jaxgames.builders import make_learner

    whole = module.run_config(preset, 256, 0, 0, 100)
    learner = make_learner(whole, with_chunk=False)
    with pytest.raises(ValueError, match="move batch 96: expected a divisor of B = 256 below it"):
        module.interleaved_chunk(learner, whole, 96)
    grouped = module.run_config(preset, 256, 48, 0, 100)
    with pytest.raises(ValueError, match="sub-batch 48 does not divide the move batch 128"):
        module.interleaved_chunk(learner, grouped, 128)


def test_row_sums_benchmark_times_every_way_and_they_agree(capsys):
    """`benchmarks/row_sums.py`: a row per way of writing the per-row sum, with its YNNPACK
    fusion count and time; and the four ways sum the same rows to float32 rounding."""
    module = script_module("benchmarks/row_sums.py")
    module.main(["--rows", "8", "--width", "5", "--seconds", "0.01"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("row sums of 8 x 5")
    rows = lines[2:]
    assert [r.split("  ")[0] for r in rows] == list(module._ways(5))
    assert all(float(r.split()[-1]) > 0 for r in rows)
    x = np.random.default_rng(0).normal(size=(8, 5)).astype(np.float32)
    for row_sum in module._ways(5).values():
        np.testing.assert_allclose(np.asarray(row_sum(jnp.asarray(x))), x.sum(-1), atol=1e-5)


def test_incremental_values_agree_with_the_full_sum_and_the_table_has_a_row_per_repeat(capsys):
    """`benchmarks/incremental_values.py`: V(a) from the board's sum plus the changed pairs
    equals the sum over all 140 pairs on every legal move of its batches, from 4 moves in to
    ended games and full columns (where its static table of slots and the masking could go
    wrong), and the table has a row per repeat."""
    module = script_module("benchmarks/incremental_values.py")
    _, net, _, union, _ = module._network()
    real = np.sum(np.asarray(union) < net.num_pairs, axis=1)
    assert union.shape[1] == real.max() == 70 and real[-1] == 0  # "no change": no slot
    module.main(["--batch-sizes", "8", "--seconds", "0.01", "--repeats", "2"])
    out = capsys.readouterr().out
    counts = re.search(r"(\d+) legal moves compared, (\d+) of (\d+) positions .*, (\d+) ended", out)
    legal, illegal, positions, ended = (int(x) for x in counts.groups())
    assert positions == 24 * 8 and legal > positions and illegal > 0 and ended > 0
    rows = [r for r in out.splitlines() if r.startswith("| 8 |")]
    assert len(rows) == 2 and all(float(r.split("|")[6]) < 2e-6 for r in rows)


@pytest.mark.parametrize(
    "bad, named",
    [
        (["--batch-sizes", "256", "0"], "--batch-sizes [256, 0]"),
        (["--repeats", "0"], "--repeats 0"),
        (["--seconds", "-1"], "--seconds -1.0"),
    ],
)
def test_incremental_values_rejects_a_count_below_one_in_one_line(bad, named, capsys):
    module = script_module("benchmarks/incremental_values.py")
    with pytest.raises(SystemExit) as stop:
        module.main(bad)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert named in err and "expected positive batch sizes, repeats and seconds" in err, err


def test_table_layout_updates_both_layouts_alike_and_copies_no_table(capsys):
    """`benchmarks/table_layout.py`: its one-table update leaves the same weights and TCL
    accumulators as `ntuple.update`, bit for bit, over batches with invalid rows and
    symmetric repeats, and neither compiled scan copies its tables (a copy would time the
    copy, not the layout)."""
    module = script_module("benchmarks/table_layout.py")
    module.main(["--batches", "3", "--rounds", "1", "--calls", "1"])
    out = capsys.readouterr().out
    assert "same weights and TCL accumulators after 2 scans: yes" in out, out
    rows = [r.split() for r in out.splitlines() if r.startswith(("apart", "together"))]
    assert len(rows) == 2 and all(r[-4] == "0" for r in rows), out


@pytest.mark.parametrize("flag", ["--batches", "--rounds", "--calls"])
def test_table_layout_rejects_a_count_below_one_in_one_line(flag, capsys):
    module = script_module("benchmarks/table_layout.py")
    with pytest.raises(SystemExit) as stop:
        module.main([flag, "0"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"{flag} 0: expected a positive count" in err, err
