"""Several seeds in one run (`train.seeds`, `train_seeds`): each agent is the one a single run
with its seed trains, bit for bit, with its own run folder; eval of the run summarises them."""

from __future__ import annotations

import dataclasses
import json

import jax
import numpy as np
import pytest

from jaxgames import presets
from jaxgames.agent import load
from jaxgames.training import train, train_seeds
from tests.helpers import xla_flags


def seeds_config(games=600, seeds=2, seed=5, preset="tictactoe-td-farl", **train_fields):
    config = presets.load(preset)
    train_cfg = dataclasses.replace(
        config.train,
        games=games,
        batch_size=16,
        chunk_steps=20,
        seed=seed,
        seeds=seeds,
        **train_fields,
    )
    return dataclasses.replace(
        config, train=train_cfg, eval=dataclasses.replace(config.eval, games=10, every=games // 2)
    )


def single(config, seed):
    """The run of one of the seeds alone, on one device (with several, a run of one seed
    would split its games over them)."""
    t = dataclasses.replace(config.train, seed=seed, seeds=1, devices=1)
    return dataclasses.replace(config, train=t)


def assert_same(a, b):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            x, y = jax.random.key_data(x), jax.random.key_data(y)
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize(
    ("preset", "games"),
    # n-tuples (TD-FARL with averaging) and the max/min Q learner with a table; at these game
    # counts seed 5 and seed 6 need different numbers of chunks, so one waits for the other
    [("tictactoe-td-farl", 575), ("tictactoe-tabular-q", 545)],
)
def test_each_agent_is_the_single_seed_run_bit_for_bit(tmp_path, preset, games):
    config = seeds_config(games=games, preset=preset, average_from=200)
    records = []
    results = train_seeds(config, tmp_path / "run", progress=False, on_eval=records.append)
    assert [int(r.carry.games) >= games for r in results] == [True] * 2
    assert sorted({e["seed"] for e in records}) == [5, 6]
    for k, result in enumerate(results):
        alone = train(single(config, 5 + k), tmp_path / f"alone-{k}", progress=False)
        assert_same(result.carry, alone.carry)
        assert_same(result.average, alone.average)
        assert int(result.carry.games) == int(alone.carry.games)
        assert [e["score"] for e in result.history] == [e["score"] for e in alone.history]
        folder = tmp_path / "run" / f"seed-{5 + k}"
        saved = json.loads((folder / "config.json").read_text())["train"]
        assert (saved["seed"], saved["seeds"]) == (5 + k, 1)
        assert (folder / "metrics.jsonl").read_text() != ""
        assert_same(load(folder, weights="last").params, alone.params)
    chunks = {int(r.carry.moves) // (16 * 20) for r in results}
    assert len(chunks) == 2, "both seeds took the same number of chunks: none waited"
    # the agents differ from one another (different seeds, not one agent copied)
    assert np.any(np.asarray(results[0].params["w"]) != np.asarray(results[1].params["w"]))
    whole = json.loads((tmp_path / "run" / "config.json").read_text())["train"]
    assert (whole["seed"], whole["seeds"]) == (5, 2)


def test_a_resumed_run_of_seeds_continues_every_agent(tmp_path):
    config = seeds_config(games=400, checkpoint_every=200)
    train_seeds(config, tmp_path / "run", progress=False)
    longer = dataclasses.replace(config, train=dataclasses.replace(config.train, games=600))
    resumed = train_seeds(longer, tmp_path / "run", progress=False, resume=True, new_schedule=True)
    for k, result in [(1, resumed[1])]:  # the second seed: its folder is not the first
        part = single(config, 5 + k)
        train(part, tmp_path / f"alone-{k}", progress=False)
        alone = train(
            single(longer, 5 + k),
            tmp_path / f"alone-{k}",
            progress=False,
            resume=True,
            new_schedule=True,
        )
        assert_same(result.carry, alone.carry)
    # a refused resume (another batch size) leaves the run's files as they were
    whole = (tmp_path / "run" / "config.json").read_bytes()
    wider = dataclasses.replace(config, train=dataclasses.replace(longer.train, batch_size=8))
    with pytest.raises(Exception, match="batch size 16 in the checkpoint, 8 in the config"):
        train_seeds(wider, tmp_path / "run", progress=False, resume=True, new_schedule=True)
    assert (tmp_path / "run" / "config.json").read_bytes() == whole
    other = dataclasses.replace(config, train=dataclasses.replace(config.train, seeds=3))
    with pytest.raises(Exception, match=r"holds the seeds 5 \.\. 6; resume it with"):
        train_seeds(other, tmp_path / "run", progress=False, resume=True)
    with pytest.raises(Exception, match="already holds a run"):
        train_seeds(config, tmp_path / "run", progress=False)


def test_bad_seed_counts_are_refused():
    with pytest.raises(ValueError, match=r"train.seeds=0: expected 1 to 1024 agents"):
        seeds_config(seeds=0)
    with pytest.raises(ValueError, match=r"train.seeds=2: expected 1 to 1024"):
        seeds_config(seeds=2, seed=2**32 - 1)
    with pytest.raises(ValueError, match=r"train.seeds=2: train\(\) trains one agent"):
        train(seeds_config(), progress=False)


def test_the_cli_trains_seeds_and_eval_summarises_the_run(tmp_path, capsys):
    from jaxgames.cli import main

    run = str(tmp_path / "run")
    flags = ["--train.games", "300", "--train.batch-size", "16", "--eval.games", "10"]
    assert (
        main(
            [
                "train",
                "tictactoe-td-farl",
                "--run-dir",
                run,
                "--no-progress",
                "--train.seeds",
                "3",
                *flags,
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "trained 3 agents of 300 games" in out and "seed-0 .. seed-2" in out, out
    assert out.count("  seed ") == 3 and "over 3 agents" in out, out
    assert main(["eval", run, "--opponent", "random", "--games", "10", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["checkpoints"] == 3
    assert [r["checkpoint"].split("/")[-3] for r in report["checkpoints"]] == [
        "seed-0",
        "seed-1",
        "seed-2",
    ]


FOUR_DEVICES = """
import dataclasses, json, sys
import jax, numpy as np
from tests.test_seeds import seeds_config, single, assert_same
from jaxgames.training import train, train_seeds, seed_devices

assert jax.device_count() == 4, jax.devices()
assert len(seed_devices(4, 0)) == 4 and len(seed_devices(6, 0)) == 3
assert len(seed_devices(4, 1)) == 1 and len(seed_devices(5, 0)) == 1
config = seeds_config(games=300, seeds=4, average_from=100)
config = dataclasses.replace(  # one evaluation, at the end, against random play
    config, eval=dataclasses.replace(config.eval, every=0, games=2, opponent="random")
)
results = train_seeds(config, sys.argv[1] + "/run", progress=False)
for k, result in enumerate(results):
    alone = train(single(config, 5 + k), progress=False)
    assert_same(result.carry, alone.carry)
    assert_same(result.average, alone.average)
print("agents equal:", len(results))
"""


def test_seeds_spread_over_four_devices_are_the_single_seed_runs(tmp_path):
    """4 forced CPU devices, one seed each (no communication): every agent equals the one
    its seed trains alone on one device, bit for bit."""
    import pathlib
    import subprocess
    import sys

    repo = pathlib.Path(__file__).resolve().parents[1]
    env = xla_flags("--xla_force_host_platform_device_count=4")
    env["PYTHONPATH"] = str(repo)
    out = subprocess.run(
        [sys.executable, "-c", FOUR_DEVICES, str(tmp_path)],
        env=env, cwd=repo, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert "agents equal: 4" in out.stdout
