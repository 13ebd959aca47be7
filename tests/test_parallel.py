"""Data parallel training (jaxgames.parallel): one agent's B games split over devices.

The multi-device checks run in a subprocess with 4 forced CPU devices
(XLA_FLAGS=--xla_force_host_platform_device_count=4). With every move random (so that both
sides play the same games, whatever the last bits of their values), every learner and
approximator kind, chunk after chunk, plays the same games and learns the same parameters to
float32 rounding on 4 devices as on 1; the values of moves agree to rounding, and each
device's equal bit for bit those of one device compiled for its share of the games; the
arena's games split over the devices are the same games; whole runs through `train` agree,
and checkpoints of a 4-device run resume on 1 device and the reverse.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import jax
import numpy as np
import pytest

from jaxgames import parallel
from tests.helpers import xla_flags

REPO = pathlib.Path(__file__).resolve().parents[1]

FOUR_DEVICES = r"""
import dataclasses, functools, sys
import jax, numpy as np
from jaxgames import parallel, presets
from jaxgames.builders import make_learner
from jaxgames.learning import farl
from jaxgames.learning.schedules import Schedule
from jaxgames.training import train

assert jax.device_count() == 4, jax.devices()
assert len(parallel.divisor_devices(64, 0)) == 4 and len(parallel.divisor_devices(64, 3)) == 2
assert len(parallel.divisor_devices(6, 4)) == 3 and len(parallel.divisor_devices(7, 0)) == 1

def small(preset, batch, steps, explore=True, **train):
    # every move random (epsilon 1): both sides play the same games whatever last bits their
    # values have, so that the updates can be compared over many steps
    config = presets.load(preset)
    t = dataclasses.replace(config.train, batch_size=batch, chunk_steps=steps, **train)
    a = config.algorithm
    if explore:
        a = dataclasses.replace(a, epsilon=Schedule("constant", 1.0))
    return dataclasses.replace(config, train=t, algorithm=a)

def same(a, b, what):
    for (path, x), y in zip(jax.tree_util.tree_flatten_with_path(a)[0], jax.tree.leaves(b)):
        if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            x, y = jax.random.key_data(x), jax.random.key_data(y)
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype.kind == "f":
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6, err_msg=f"{what} {path}")
        else:
            np.testing.assert_array_equal(x, y, err_msg=f"{what} {path}")

CASES = [  # every approximator, every learner family, a stochastic game
    ("tictactoe-td-farl", 64, 4, 4),     # n-tuple, TD-FARL (final updates of ended games)
    ("tictactoe-sarsa-farl", 64, 4, 4),  # n-tuple, SARSA
    ("tictactoe-tabular-q", 64, 4, 4),   # tabular, max/min Q-learning with replay
    ("tictactoe-cnn-dqn", 16, 4, 4),     # CNN, max/min Q (averaged gradients)
    ("connect4-linear-q", 16, 8, 3),     # linear, Q-FARL
]
if sys.argv[2] == "quick":
    CASES = CASES[:1]
if sys.argv[2] == "all":
    CASES.append(("2048-td", 16, 4, 2))  # chance moves (20 s to compile)
for preset, batch, steps, chunks in CASES:
    learner = make_learner(small(preset, batch, steps))
    mesh = parallel.MeshChunk(learner, learner.init(jax.random.key(0)), jax.devices())
    one = mesh_ = learner.init(jax.random.key(0))
    mesh_ = mesh.place(one)
    for c in range(chunks):
        mesh_, got_metrics = mesh(mesh_)
        assert mesh_.states.terminated.sharding.spec == mesh.shardings.states.terminated.spec
        assert len(mesh_.states.terminated.sharding.device_set) == 4
        one, metrics = learner.chunk(one)
        same(one, mesh_, f"{preset} chunk {c}")
        same(metrics, got_metrics, f"{preset} chunk {c} metrics")
    assert int(one.games) > 0 or preset == "2048-td", preset
    print("chunks agree:", preset, int(one.games))
if sys.argv[2] == "quick":
    sys.exit(0)

# the values of the moves: each device values its games as one device compiled for B / D
# games does, bit for bit (B = 64 and B = 16 programs may differ in the last bit: XLA:CPU
# orders a reduction by the shapes it compiles for)
learner = make_learner(small("connect4-td-farl", 64, 2, explore=False))
carry = learner.init(jax.random.key(1))
w = jax.random.uniform(jax.random.key(2), carry.params["w"].shape, minval=-0.1, maxval=0.1)
carry = carry._replace(params={**carry.params, "w": w})
for _ in range(3):
    carry, _ = learner.chunk(carry)
scores = jax.jit(jax.vmap(
    functools.partial(farl.all_action_scores, learner.game, learner.model, learner.settings),
    (None, 0, 0),
))
mesh = parallel.MeshChunk(learner, carry, jax.devices())
split = mesh.place(carry)
with jax.set_mesh(mesh.mesh):
    on_four = np.asarray(scores(split.params, split.states, split.features)[0])
whole = np.asarray(scores(carry.params, carry.states, carry.features)[0])
np.testing.assert_allclose(on_four, whole, rtol=1e-6, atol=1e-7)
quarter = lambda x: x[16:32]
alone = scores(carry.params, jax.tree.map(quarter, carry.states), quarter(carry.features))[0]
np.testing.assert_array_equal(np.asarray(alone), on_four[16:32])
print("values agree")

# the arena's games split over the devices: random moves, chance and an exact player's
# choices are the same games as on one device
from jaxgames import make
from jaxgames.evaluation import arena
from jaxgames.opponents import make_opponent
for name in ("tictactoe", "2048"):
    game = make(name)
    agent = make_opponent("random", game)
    other = make_opponent("perfect" if name == "tictactoe" else "random", game)
    others = [] if game.num_players == 1 else other
    plays = [arena(game, agent, others, 64, jax.random.key(4), devices=d) for d in (1, 4, 0)]
    for p in plays[1:]:
        np.testing.assert_array_equal(p.scores, plays[0].scores, err_msg=name)
        np.testing.assert_array_equal(p.final_boards, plays[0].final_boards, err_msg=name)
        assert p.overall == plays[0].overall, name
try:
    arena(game, agent, [], 8, jax.random.key(0), devices=5)
except ValueError as e:
    assert "devices=5: only 4 device(s) visible" in str(e), e
else:
    raise AssertionError("devices=5 of 4 accepted")
print("arenas agree")

# whole runs: 4 devices against 1, checkpoints resumed across device counts
root = sys.argv[1]
config = small("tictactoe-td-farl", 64, 0, games=300, checkpoint_every=150)
ev = dataclasses.replace(config.eval, every=150, games=4, opponent="random")
config = dataclasses.replace(config, eval=ev)
four = train(config, run_dir=root + "/four", progress=False)
assert len(four.carry.params["w"].sharding.device_set) == 4
assert len(four.carry.states.board.sharding.device_set) == 4
one_config = dataclasses.replace(config, train=dataclasses.replace(config.train, devices=1))
one = train(one_config, run_dir=root + "/one", progress=False)
assert len(one.carry.params["w"].sharding.device_set) == 1
same(four.carry, one.carry, "runs")
assert [h["train_games"] for h in four.history] == [h["train_games"] for h in one.history]
longer = lambda c: dataclasses.replace(c, train=dataclasses.replace(c.train, games=450))
again = dict(resume=True, new_schedule=True, progress=False)
a = train(longer(one_config), run_dir=root + "/four", **again)
b = train(longer(config), run_dir=root + "/one", **again)
assert len(a.carry.states.board.sharding.device_set) == 1, "the 4-device run resumed on 1"
assert len(b.carry.states.board.sharding.device_set) == 4, "the 1-device run resumed on 4"
assert int(a.carry.games) == int(b.carry.games) >= 450
same(a.carry, b.carry, "resumed runs")
print("runs agree")
"""


def _four_devices(folder, cases: str) -> str:
    env = xla_flags("--xla_force_host_platform_device_count=4")
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run(
        [sys.executable, "-c", FOUR_DEVICES, str(folder), cases],
        env=env, cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-4000:]
    if cases != "quick":  # the quick script stops after the chunks
        for part in ("values agree", "arenas agree", "runs agree"):
            assert part in out.stdout, out.stdout
    return out.stdout


def test_tictactoe_td_farl_learns_the_same_on_four_devices(tmp_path):
    """The default run's data-parallel check (4 forced CPU devices): n-tuple TD-FARL, chunk
    after chunk, the same games and parameters as on 1 device; the next test, in the
    integration run, checks every learner and approximator, move values, arenas and runs."""
    out = _four_devices(tmp_path, "quick")
    assert out.count("chunks agree:") == 1 and "chunks agree: tictactoe-td-farl" in out, out


@pytest.mark.integration  # 60-150 s: 5 learners' steps compiled for 1 and 4 devices, 4 runs
def test_every_learner_and_approximator_learns_the_same_on_four_devices(tmp_path):
    assert _four_devices(tmp_path, "deterministic").count("chunks agree:") == 5


@pytest.mark.slow  # 2048's n-tuple step takes 20 s more to compile for 1 and for 4 devices
def test_a_game_with_chance_learns_the_same_on_four_devices(tmp_path):
    assert "chunks agree: 2048-td" in _four_devices(tmp_path, "all")


SMALL_RUN = [
    "tictactoe-td-farl",
    "--train.games",
    "300",
    "--train.batch-size",
    "64",
    "--train.checkpoint-every",
    "150",
    "--algorithm.epsilon.start",
    "1",
    "--algorithm.epsilon.end",
    "1",
    "--eval.games",
    "4",
    "--eval.opponent",
    "random",
    "--eval.every",
    "150",
    "--no-progress",
]  # fmt: skip  (every move random: the same games whatever the last bits of the values)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.mark.integration  # 40-60 s: two `jaxgames train` processes and a resume
def test_train_distributed_over_two_processes_is_the_one_process_run(tmp_path, capsys):
    """`jaxgames train --distributed` in 2 processes on localhost (2 forced CPU devices each,
    gloo): process 0 alone writes the records and the plot, both write the checkpoints (orbax
    across processes); the agent is the one a single process trains (to float32 rounding),
    and its checkpoint resumes in a single process."""
    import json

    from jaxgames import checkpoint, cli
    from jaxgames.builders import make_learner
    from jaxgames.checkpoint import read_meta

    port, run, alone = _free_port(), tmp_path / "two", tmp_path / "one"
    env = xla_flags("--xla_force_host_platform_device_count=2")
    env["PYTHONPATH"] = str(REPO)
    dist = ["--distributed", "--coordinator", f"localhost:{port}", "--num-processes", "2"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "jaxgames", "train", *SMALL_RUN, "--run-dir", str(run),
             *dist, "--process-id", str(i)],
            env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for i in range(2)
    ]  # fmt: skip
    try:
        outs = [p.communicate(timeout=240) for p in procs]
    finally:
        for p in procs:
            p.kill()
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
    assert "trained 303 games" in outs[0][0] and "trained" not in outs[1][0], outs  # process 0
    assert cli.main(["train", *SMALL_RUN, "--run-dir", str(alone), "--train.devices", "1"]) == 0
    records = [[json.loads(line) for line in (r / "metrics.jsonl").open()] for r in (run, alone)]
    evals = [[(e["train_games"], e["games"]) for e in rs if e["kind"] == "eval"] for rs in records]
    assert evals[0] == evals[1] and len(evals[0]) == 2, evals  # once each, not once a process
    assert (run / "curve.png").exists()
    config, _, _, step = read_meta(run)
    template = make_learner(config, with_chunk=False).init(jax.random.key(0))
    both = [checkpoint.restore(r, template)[0] for r in (run, alone)]
    assert step == int(both[0].games) == int(both[1].games) == 303
    np.testing.assert_array_equal(
        np.asarray(both[0].states.board), np.asarray(both[1].states.board)
    )
    np.testing.assert_allclose(both[0].params["w"], both[1].params["w"], rtol=1e-5, atol=1e-6)
    longer = ["--train.games", "450", "--resume", "--new-schedule"]
    for r in (run, alone):  # the 2-process checkpoint goes on in one process, as the other
        assert cli.main(["train", *SMALL_RUN, "--run-dir", str(r), *longer]) == 0
    capsys.readouterr()
    both = [checkpoint.restore(r, template)[0] for r in (run, alone)]
    assert int(both[0].games) == int(both[1].games) >= 450
    np.testing.assert_allclose(both[0].params["w"], both[1].params["w"], rtol=1e-5, atol=1e-6)


def test_more_devices_than_visible_is_refused():
    with pytest.raises(ValueError, match=r"train.devices=9: only 1 device\(s\) visible"):
        parallel.divisor_devices(64, 9)
    assert parallel.divisor_devices(64, 0) == jax.devices()[:1]
    from jaxgames import make
    from jaxgames.evaluation import arena
    from jaxgames.opponents import make_opponent

    game = make("tictactoe")
    rand = make_opponent("random", game)
    with pytest.raises(ValueError, match=r"^devices=2: only 1 device\(s\) visible"):
        arena(game, rand, rand, 4, jax.random.key(0), devices=2)
    from jaxgames import cli

    with pytest.raises(SystemExit):
        cli.main(["eval", "runs/none", "--devices", "-1"])


def test_distributed_flags_are_checked_before_anything_starts(capsys, tmp_path):
    from jaxgames import cli

    run = ["train", "tictactoe-td-farl", "--run-dir", str(tmp_path / "r")]
    cases = [
        (["--coordinator", "localhost:1"], "need --distributed"),
        (["--distributed", "--coordinator", "localhost:1"], "give all of --coordinator"),
        (
            ["--distributed", "--coordinator", "h:1", "--num-processes", "2", "--process-id", "2"],
            r"--process-id 2: expected 0 to 1",
        ),
    ]
    for flags, message in cases:
        assert cli.main([*run, *flags]) == 2
        assert re.search(message, capsys.readouterr().err), flags
    assert not (tmp_path / "r").exists()


def test_off_a_mesh_the_update_is_the_models_own():
    calls = []
    update = parallel.gathered(lambda *args: calls.append(args) or "done")
    assert update(1, 2, 3, 4) == "done" and calls == [(1, 2, 3, 4)]
    assert not parallel.on_mesh()
