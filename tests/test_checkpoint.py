"""Checkpoints: exact resume, atomic saves, and a clear error for every bad input."""

from __future__ import annotations

import dataclasses
import errno
import json
import pathlib
import signal

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames import checkpoint, presets
from jaxgames.checkpoint import CheckpointError
from jaxgames.evaluation import arena
from jaxgames.opponents import random_policy
from jaxgames.training import TrainingError, train


def small_config(games=3000, preset="tictactoe-td-farl", every=1000, **train_fields):
    config = presets.load(preset)
    return dataclasses.replace(
        config,
        train=dataclasses.replace(config.train, games=games, chunk_steps=20, **train_fields),
        eval=dataclasses.replace(config.eval, games=20, every=every),
    )


@pytest.mark.parametrize(
    ("preset", "games"),
    # the DQN carry adds a replay buffer, a target network and Adam's state
    [
        ("tictactoe-td-farl", 1500),
        pytest.param("tictactoe-cnn-dqn", 300, marks=pytest.mark.slow),  # 40-60 s to compile
    ],
)
def test_stopped_and_resumed_run_is_bit_identical(tmp_path, preset, games):
    # parameter averaging from a third on: the stop falls inside the averaged stretch
    config = small_config(
        games, preset, every=games // 3, checkpoint_every=games // 6, average_from=games // 3
    )
    whole = train(config, run_dir=tmp_path / "whole", progress=False)

    def interrupt(entry):
        if entry["train_games"] >= 2 * games // 3:
            signal.raise_signal(signal.SIGINT)  # what Ctrl-C does: stop after this chunk

    part = train(config, run_dir=tmp_path / "part", progress=False, on_eval=interrupt)
    assert part.interrupted and int(part.carry.games) < config.train.games
    stopped_at = checkpoint.latest_step(tmp_path / "part")
    assert stopped_at == int(part.carry.games)
    resumed = train(config, run_dir=tmp_path / "part", progress=False, resume=True)
    assert int(resumed.carry.games) == int(whole.carry.games)
    # scratch: the n-tuple update's hit tally, not saved (only what one update adds to it is
    # read; tests/test_ntuple.py checks that any starting tally gives the same weights)
    plain = lambda carry: carry._replace(key=jax.random.key_data(carry.key), scratch=None)
    leaves = zip(
        jax.tree.leaves(plain(resumed.carry)), jax.tree.leaves(plain(whole.carry)), strict=True
    )
    for a, b in leaves:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert resumed.average_count == whole.average_count > 1
    for a, b in zip(jax.tree.leaves(resumed.average), jax.tree.leaves(whole.average), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(
        np.asarray(resumed.carry.states.board), np.asarray(whole.carry.states.board)
    )
    assert resumed.history[-1]["score"] == whole.history[-1]["score"]


def test_the_average_is_the_mean_of_the_sampled_parameters_and_the_agent_plays_it(tmp_path):
    """train.average_from: the mean of the parameters at every chunk end from there on (here
    begun on resuming a run saved without it); the loaded agent plays the mean unless asked
    for the latest parameters."""
    from jaxgames.builders import make_learner

    run = tmp_path / "run"
    first = train(small_config(games=600, every=0), run_dir=run, progress=False)
    assert first.average is None and first.agent_params is first.params
    config = small_config(games=1200, every=0, average_from=600, average_every=1)
    resumed = train(config, run_dir=run, progress=False, resume=True, new_schedule=True)
    chunk, carry, samples = make_learner(config).chunk, first.carry, []
    while int(carry.games) < 1200:
        carry, _ = chunk(carry)
        samples.append(np.asarray(carry.params["w"]))
    assert resumed.average_count == len(samples) > 2
    np.testing.assert_allclose(
        np.asarray(resumed.average["w"]), np.mean(samples, axis=0), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_array_equal(np.asarray(resumed.params["w"]), samples[-1])
    assert resumed.history[-1]["average_count"] == len(samples)
    agent = jaxgames.load(run)
    assert agent.average_count == len(samples)
    np.testing.assert_array_equal(np.asarray(agent.params["w"]), np.asarray(resumed.average["w"]))
    last = jaxgames.load(run, weights="last")
    assert last.average_count == 0
    np.testing.assert_array_equal(np.asarray(last.params["w"]), samples[-1])
    with pytest.raises(ValueError, match=r"'newest'.*expected one of"):
        jaxgames.load(run, weights="newest")
    with pytest.raises(ValueError, match=r"average_from=-1: expected a game count >= 0"):
        small_config(average_from=-1)


def test_run_folder_contents_and_rotation(tmp_path):
    run = tmp_path / "run"
    config = small_config(games=1200, checkpoint_every=300, keep_checkpoints=2)
    train(config, run_dir=run, progress=False)
    assert (run / "config.json").is_file() and (run / "curve.png").is_file()
    steps = sorted(int(p.name) for p in (run / "checkpoints").iterdir())
    assert len(steps) == 2 and steps[-1] >= 1200
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert {"train", "eval"} <= {r["kind"] for r in records}
    config, meta, _, step = checkpoint.read_meta(run)
    assert step == steps[-1] and meta["games"] == step
    assert meta["game"] == {"name": "tictactoe", "options": {}, "version": 1}
    assert {"jaxgames", "jax", "orbax-checkpoint"} <= set(meta["versions"])
    assert config.train.games == 1200


def test_loaded_agent_plays_unbatched_and_in_the_arena(tmp_path):
    run = tmp_path / "run"
    train(small_config(), run_dir=run, progress=False)
    agent = jaxgames.load(run)
    assert agent.game is jaxgames.make("tictactoe")
    state = agent.game.init(None)
    action = jax.jit(agent.policy)(state, jax.random.key(0))
    assert action.shape == () and bool(state.legal_action_mask[action])
    result = arena(agent.game, agent.batched(), random_policy, 50, jax.random.key(1))
    assert result.overall.losses < 10
    values = agent.move_values(state)
    assert values.shape == (9,) and np.all(np.isfinite(values))


def test_missing_and_unrelated_paths_are_clear_errors(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        jaxgames.load(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match=r"no checkpoint found at .*empty"):
        jaxgames.load(tmp_path / "empty")


def test_corrupt_checkpoints_are_rejected(tmp_path):
    run = tmp_path / "run"
    train(small_config(games=500), run_dir=run, progress=False)
    step_dir = run / "checkpoints" / str(checkpoint.latest_step(run))
    for f in (step_dir / "state").rglob("*"):
        if f.is_file() and f.stat().st_size > 0 and f.suffix not in (".json",):
            f.write_bytes(b"\x00garbage" * 8)
    with pytest.raises(CheckpointError, match=r"could not be restored.* older"):
        jaxgames.load(run)
    (step_dir / "meta" / "metadata").write_text("{not json")
    with pytest.raises(CheckpointError, match="unreadable metadata"):
        jaxgames.load(run)


def test_a_checkpoint_of_another_game_cannot_be_resumed(tmp_path):
    run = tmp_path / "run"
    train(small_config(games=500), run_dir=run, progress=False)
    nim = presets.load("nim-td-farl")
    with pytest.raises(CheckpointError, match=r"game tictactoe .* in the checkpoint, nim"):
        train(nim, run_dir=run, progress=False, resume=True)
    with pytest.raises(CheckpointError, match="already holds a run; pass --resume"):
        train(small_config(games=500), run_dir=run, progress=False)


def test_non_finite_parameters_are_refused(tmp_path):
    run = tmp_path / "run"
    result = train(small_config(games=500), run_dir=run, progress=False)
    bad = result.carry._replace(
        params={"w": result.carry.params["w"].at[3].set(jnp.nan)}, games=result.carry.games + 1
    )
    checkpoint.save(run, bad, result.learner.config, {})
    with pytest.raises(CheckpointError, match="contain NaN or infinite values"):
        jaxgames.load(run)


def test_divergence_stops_training_with_a_clear_error():
    config = small_config(games=2000)
    config = dataclasses.replace(
        config,
        approximator=dataclasses.replace(config.approximator, output="identity"),
        algorithm=dataclasses.replace(
            config.algorithm,
            alpha=dataclasses.replace(config.algorithm.alpha, start=1e30, end=1e30),
        ),
    )
    with pytest.raises(TrainingError, match=r"NaN or infinite .* lower algorithm\.alpha"):
        train(config, progress=False)


def test_a_full_disk_leaves_the_last_checkpoint_intact(tmp_path, monkeypatch):
    run = tmp_path / "run"
    result = train(small_config(games=500), run_dir=run, progress=False)
    good = checkpoint.latest_step(run)
    import orbax.checkpoint as ocp

    def no_space(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ocp.CheckpointManager, "save", no_space)
    later = result.carry._replace(games=result.carry.games + 100)
    with pytest.raises(
        CheckpointError, match=f"No space left on device; checkpoint {good} is intact"
    ):
        checkpoint.save(run, later, result.learner.config, {})
    monkeypatch.undo()
    assert checkpoint.latest_step(run) == good
    assert jaxgames.load(run).meta["games"] == good


def test_resuming_may_change_the_schedule_on_purpose(tmp_path):
    """Seed 000's workflow in small: anneal epsilon, then resume with a faster annealing that
    starts from the value the first session reached."""
    from jaxgames.builders import make_learner
    from jaxgames.learning.schedules import Schedule

    first = small_config(games=1000)
    first = dataclasses.replace(
        first,
        algorithm=dataclasses.replace(
            first.algorithm, epsilon=Schedule("anneal", 0.9, 0.0, 0, 0.999)
        ),
    )
    run = tmp_path / "run"
    done = train(first, run_dir=run, progress=False)
    played = int(done.carry.games)
    reached = float(make_learner(first).settings.epsilon(played))
    second = dataclasses.replace(
        first,
        train=dataclasses.replace(first.train, games=2000),
        algorithm=dataclasses.replace(
            first.algorithm, epsilon=Schedule("anneal", reached, 0.0, 0, 0.99, offset=played)
        ),
    )
    resumed = train(second, run_dir=run, progress=False, resume=True, new_schedule=True)
    spec = resumed.learner.settings
    assert float(spec.epsilon(played)) == pytest.approx(reached)
    assert float(spec.epsilon(played + 100)) == pytest.approx(reached * 0.99**100, rel=1e-4)
    assert int(resumed.carry.games) >= 2000


def test_metrics_can_also_go_to_tensorboard(tmp_path):
    pytest.importorskip("tensorboardX")
    run = tmp_path / "run"
    train(small_config(games=500, tensorboard=True), run_dir=run, progress=False)
    assert any((run / "tensorboard").iterdir())


def test_agent_loads_the_parameters_of_a_run_whose_game_state_layout_changed(tmp_path):
    """A checkpoint saved while the game's state had other fields (an older jaxgames) still
    loads as an agent: only the parameters are read. Resuming training needs the whole carry
    and says that it cannot."""
    config = small_config(games=400)
    result = train(config, run_dir=tmp_path / "run", progress=False)
    carry = result.carry
    old_state = carry.states.replace(extras={**carry.states.extras, "removed": jnp.ones(3)})
    carry = carry._replace(states=old_state, games=carry.games + 1)
    checkpoint.save(tmp_path / "run", carry, config, {})
    agent = jaxgames.load(tmp_path / "run")
    assert agent.path.name == str(int(carry.games))
    for a, b in zip(jax.tree.leaves(agent.params), jax.tree.leaves(carry.params), strict=True):
        assert isinstance(a, jax.Array)
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert np.isfinite(agent.move_values(agent.game.init(jax.random.key(0)))).any()
    with pytest.raises(CheckpointError, match="could not be restored"):
        train(config, run_dir=tmp_path / "run", progress=False, resume=True)


OLD_RUNS = pathlib.Path(__file__).resolve().parent / "data" / "checkpoints-0.1.0"


@pytest.mark.parametrize("kind", ["q", "td"])
def test_checkpoints_of_jaxgames_0_1_0_load_and_resume_to_the_same_parameters(tmp_path, kind):
    """Runs saved by 0.1.0 (every kind's settings in both config sections, the replay buffer
    under its old array names): their agents load, and resumed to 600 games they reach the
    parameters that 0.1.0 itself reached (tests/data/checkpoints-0.1.0/README.md)."""
    import shutil

    run = tmp_path / kind
    shutil.copytree(OLD_RUNS / kind, run)
    agent = jaxgames.load(run)
    assert agent.meta["games"] == 303 if kind == "q" else agent.meta["games"] > 300
    assert np.isfinite(agent.move_values(agent.game.init(jax.random.key(0)))).any()
    config, _, _, _ = checkpoint.read_meta(run)
    config = dataclasses.replace(config, train=dataclasses.replace(config.train, games=600))
    # 0.1.0 stretched the schedules to the new length, as --new-schedule does now
    resumed = train(config, run_dir=run, progress=False, resume=True, new_schedule=True)
    want = np.load(OLD_RUNS / "continued.npz")
    np.testing.assert_array_equal(np.asarray(resumed.params["w"]), want[f"{kind}['w']"])
    if kind == "td":
        np.testing.assert_array_equal(np.asarray(resumed.average["w"]), want["td-average['w']"])


def test_a_checkpoint_of_other_rules_cannot_be_resumed(tmp_path):
    """Checkpoints record the version of the game's rules; resuming under other rules (whose
    states may mean something else) is refused, naming both versions."""
    config = small_config(games=200, every=0)
    train(config, run_dir=tmp_path / "run", progress=False)
    meta_file = next((tmp_path / "run" / "checkpoints").glob("*/meta/metadata"))
    meta = json.loads(meta_file.read_text())
    assert meta["game"]["version"] == jaxgames.make("tictactoe").version
    meta["game"]["version"] = 99
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="version 99 of the tictactoe rules"):
        train(
            small_config(games=400, every=0), run_dir=tmp_path / "run", progress=False, resume=True
        )
    assert jaxgames.load(tmp_path / "run").meta["game"]["version"] == 99  # the agent still loads


def test_a_run_resumed_after_a_crash_records_each_game_count_once(tmp_path):
    """After SIGKILL the records past the last checkpoint (and a line cut off) are dropped on
    resume, so the continued run writes each game count once, in order."""
    import shutil

    run = tmp_path / "run"
    config = small_config(games=900, every=300, checkpoint_every=300, log_every=100)
    train(config, run_dir=run, progress=False)
    newest = checkpoint.latest_step(run)
    shutil.rmtree(run / "checkpoints" / str(newest))  # as if killed before that save
    with (run / "metrics.jsonl").open("a") as f:
        f.write('{"kind": "tr')  # a record cut off
    resumed = train(config, run_dir=run, progress=False, resume=True)
    assert int(resumed.carry.games) >= 900
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    for kind in ("train", "eval"):
        games = [r["train_games"] for r in records if r["kind"] == kind]
        assert games == sorted(set(games)), (kind, games)
    # the wall clock (evaluations included) goes on from the checkpoint's, never backwards
    walls = [r["wall_seconds"] for r in records]
    assert walls == sorted(walls), walls
    assert all(r["wall_seconds"] >= r["train_seconds"] for r in records), records


def test_the_run_lock_of_a_killed_process_is_no_lock(tmp_path):
    """The run folder's lock is the operating system's: a trainer killed with SIGKILL leaves
    no stale lock behind, and a live holder is named in the refusal."""
    import subprocess
    import sys
    import time

    from jaxgames import runlog

    run = tmp_path / "run"
    run.mkdir()
    hold = (
        "import fcntl, os, sys, time; f = open(sys.argv[1], 'a+'); "
        "fcntl.flock(f, fcntl.LOCK_EX); f.write(str(os.getpid())); f.flush(); "
        "print('held', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(run / runlog.LOCK)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(runlog.RunInUse, match=f"process {holder.pid}"), runlog.exclusive(run):
            pass
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.1)
    with runlog.exclusive(run):  # free again
        assert (run / runlog.LOCK).read_text() == str(__import__("os").getpid())


def test_metrics_can_also_go_to_csv_files(tmp_path):
    import csv

    from jaxgames.config import LogConfig

    run = tmp_path / "run"
    config = dataclasses.replace(small_config(games=500), log=LogConfig(backends=("csv",)))
    train(config, run_dir=run, progress=False)
    rows = list(csv.DictReader((run / "train.csv").open()))
    jsonl = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert [int(r["train_games"]) for r in rows] == [
        r["train_games"] for r in jsonl if r["kind"] == "train"
    ]
    evals = list(csv.DictReader((run / "eval.csv").open()))
    assert evals and {"score", "win_rate", "points"} <= set(evals[0])


def test_metrics_can_also_go_to_weights_and_biases_offline(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    from jaxgames.config import LogConfig

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    run = tmp_path / "run"
    config = dataclasses.replace(small_config(games=500), log=LogConfig(backends=("wandb",)))
    train(config, run_dir=run, progress=False)
    offline = list((run / "wandb").glob("offline-run-*/run-*.wandb"))
    assert offline and offline[0].stat().st_size > 0
