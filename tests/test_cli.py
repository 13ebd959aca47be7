"""The `jaxgames` command: train / eval / play / inspect, bad input, Ctrl-C and SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from jaxgames import checkpoint, cli

# one worker runs this module, so that its module-scoped trained run is trained once
pytestmark = pytest.mark.xdist_group("cli")

SMALL = [
    "--train.games",
    "1500",
    "--train.chunk-steps",
    "20",
    "--eval.games",
    "20",
    "--no-progress",
]


def jaxgames(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxgames", *args],
        capture_output=True,
        text=True,
        check=False,
        **kwargs,
    )


def in_process(capsys, *args) -> subprocess.CompletedProcess:
    """`jaxgames ARGS` through `cli.main` in this process: no interpreter start-up and JAX
    import per call (the `trained` fixture and the installed-command tests run the command
    itself)."""
    capsys.readouterr()
    try:
        code = cli.main(list(args))
    except SystemExit as exit_:
        code = exit_.code
    out = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out.out, out.err)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run = tmp_path_factory.mktemp("cli") / "ttt"
    averaged = ["--train.average-from", "1000"]  # the agent: the mean over the last third
    done = jaxgames("train", "tictactoe-td-farl", "--run-dir", str(run), *SMALL, *averaged)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "trained" in done.stdout and "evaluation against perfect" in done.stdout
    return run


def test_eval_json_has_the_documented_fields(trained, capsys):
    common = ["eval", str(trained), "--opponent", "random", "--games", "30", "--seats", "first"]
    done = in_process(capsys, *common, "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert {"games", "wins", "draws", "losses", "score", "win_rate", "ci95"} <= set(record)
    assert record["games"] == 30 and set(record["by_seat"]) == {"0"}
    assert record["average_count"] > 1  # the averaged parameters play by default
    done = in_process(capsys, *common, "--weights", "last")
    assert done.returncode == 0, done.stderr
    assert "games) against random" in done.stdout and "mean of" not in done.stdout


def test_eval_of_several_checkpoints_summarises_them(trained, capsys):
    [step] = [p.name for p in (trained / checkpoint.CHECKPOINTS).iterdir()]
    paths = [str(trained), str(trained / checkpoint.CHECKPOINTS / step)]
    common = ["--opponent", "random", "--games", "25", "--seats", "first"]
    done = in_process(capsys, "eval", *paths, *common, "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    first, second = record["checkpoints"]
    assert first["checkpoint"] == second["checkpoint"]  # the run folder means its newest
    assert first["wins"] == second["wins"] and first["points"] == second["points"]
    summary = record["summary"]
    assert summary["checkpoints"] == 2 and summary["games"] == 50
    assert summary["wins"] == 2 * first["wins"] and summary["points_sd"] == 0.0
    assert summary["points"] == pytest.approx((first["wins"] + first["draws"] / 2) / 25)
    text = in_process(capsys, "eval", *paths, *common)
    assert text.returncode == 0, text.stderr
    assert text.stdout.count("against random: score") == 2
    assert "over 2 checkpoints against random: win rate" in text.stdout


def test_eval_checks_every_path_before_evaluating(trained, capsys):
    done = in_process(capsys, "eval", str(trained), "/nonexistent/run", "--opponent", "random")
    assert done.returncode == 2 and "the path does not exist" in done.stderr
    assert "against random" not in done.stdout  # the good first path was not evaluated


def test_summary_weighs_every_checkpoint_the_same():
    records = [
        {"win_rate": 0.9, "points": 0.95, "score": 0.9, "games": 200, "wins": 180,
         "draws": 20, "losses": 0},
        {"win_rate": 0.5, "points": 0.6, "score": 0.2, "games": 100, "wins": 50,
         "draws": 20, "losses": 30},
    ]  # fmt: skip
    s = cli._summary(records)
    assert s["win_rate"] == pytest.approx(0.7) and s["points"] == pytest.approx(0.775)
    assert s["win_rate_sd"] == pytest.approx(0.4 / 2**0.5)
    assert (s["points_min"], s["points_max"]) == (0.6, 0.95)
    assert (s["games"], s["wins"], s["draws"], s["losses"]) == (300, 230, 40, 30)


def test_inspect_reports_training_and_values(trained, capsys):
    done = in_process(capsys, "inspect", str(trained), "--moves", "4,0")
    assert done.returncode == 0, done.stderr
    assert "active (non-zero) by player" in done.stdout
    assert "position after moves ['4', '0']" in done.stdout and "row 0 col 1" in done.stdout


def test_play_survives_bad_input_and_finishes_a_game(trained):
    script = iter(["", "hello", "99", "-1", "?", "4", "4"] + [str(a) for a in range(9)] * 3)
    lines = []
    code = cli.cmd_play(
        [str(trained), "--seat", "first"], input_fn=lambda _: next(script), out=lines.append
    )
    text = "\n".join(lines)
    assert code == 0
    assert "'hello' is not a move number" in text
    assert "action 99 is not legal" in text and "action -1 is not legal" in text
    assert "legal moves:" in text
    assert ("you win!" in text) or ("you lose." in text) or ("a draw." in text)


def test_play_quits_on_end_of_input(trained):
    def eof(_):
        raise EOFError

    assert cli.cmd_play([str(trained)], input_fn=eof, out=lambda *_: None) == 0


def test_bad_input_gives_one_clear_line_through_the_installed_command(tmp_path):
    """The command as installed (a subprocess): one line on stderr, exit 2; tests/
    test_reliability.py goes through every documented case in-process."""
    done = jaxgames("train", "no-such-preset", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "neither a file nor a preset; presets: 2048-td, " in done.stderr
    done = jaxgames("eval", "/nonexistent/run", "--opponent", "random", "--seed", "-1")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "expected a seed in [0, 2^32)" in done.stderr


def test_eval_against_another_agent(trained, capsys):
    """`agent:PATH` plays a trained agent's greedy policy; from all 1-ply openings the agent
    meets itself in both seats, so the two seats' results mirror each other, up to the games
    where a tie between equally valued moves is broken differently (the briefly trained
    fixture still values many positions alike)."""
    done = in_process(
        capsys, "eval", str(trained), "--opponent", f"agent:{trained}", "--games", "1",
        "--openings", "1", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["games"] == 2 * 9
    first, second = record["by_seat"]["0"], record["by_seat"]["1"]
    assert all(sum(seat[k] for k in ("wins", "draws", "losses")) == 9 for seat in (first, second))
    mismatch = abs(first["wins"] - second["losses"]) + abs(first["losses"] - second["wins"])
    assert mismatch <= 2, (first, second)


def test_an_agent_of_another_game_is_refused_as_opponent(trained):
    import jaxgames

    wrong = r"plays Game\(tictactoe.*the evaluated agent plays Game\(nim"
    with pytest.raises(cli.UsageError, match=wrong):
        cli._opponent(f"agent:{trained}", jaxgames.make("nim"))
    with pytest.raises(cli.UsageError, match="expected agent:PATH"):
        cli._opponent("agent:", jaxgames.make("nim"))


def _train_args(run, games: str) -> list[str]:
    """A TicTacToe run that checkpoints every 2,000 games in small chunks."""
    return [
        "train",
        "tictactoe-td-farl",
        "--run-dir",
        str(run),
        "--train.games",
        games,
        "--train.checkpoint-every",
        "2000",
        "--train.chunk-steps",
        "20",
        "--eval.games",
        "10",
        "--no-progress",
    ]


def _start_training(run, games="200000"):
    cmd = [sys.executable, "-m", "jaxgames", *_train_args(run, games)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_checkpoint(run, proc, timeout=120):
    deadline = time.time() + timeout
    while checkpoint.latest_step(run) is None:
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.time() < deadline, "no checkpoint appeared"
        time.sleep(0.2)


@pytest.mark.skipif(os.name != "posix", reason="signals")
@pytest.mark.slow  # 20-40 s; tests/test_checkpoint.py sends the same SIGINT in-process
def test_ctrl_c_saves_a_checkpoint_and_exits_cleanly(tmp_path):
    run = tmp_path / "run"
    proc = _start_training(run)
    _wait_for_checkpoint(run, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "checkpoint saved" in out and "--resume" in out
    step = checkpoint.latest_step(run)
    assert step is not None and step < 200_000


@pytest.mark.skipif(os.name != "posix", reason="signals")
@pytest.mark.slow  # 50-80 s; Ctrl-C's test and tests/test_checkpoint.py cover resuming
def test_after_sigkill_the_run_resumes_from_the_last_checkpoint(tmp_path):
    run = tmp_path / "run"
    proc = _start_training(run, games="24000")
    _wait_for_checkpoint(run, proc)
    proc.kill()
    proc.wait()
    step = checkpoint.latest_step(run)
    done = jaxgames(*_train_args(run, "24000"), "--resume")
    assert done.returncode == 0, done.stderr[-2000:]
    assert checkpoint.latest_step(run) >= 24_000 > step


@pytest.mark.slow  # 20 s; tests/test_evaluation.py checks the same report in-process
def test_eval_lists_the_agents_mistakes(trained):
    """Against the perfect TicTacToe player every mistake loses the game, so the games with a
    mistake are the lost ones."""
    done = jaxgames(
        "eval", str(trained), "--opponent", "perfect", "--games", "20", "--epsilon", "0.5",
        "--mistakes", "2", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    report = record["mistakes"]
    assert report["games"] == 40 and report["games_with_mistakes"] == record["losses"] > 0
    assert 1 <= len(report["positions"]) <= 2
    for m in report["positions"]:
        legal = [v for v in m["values"] if v is not None]
        assert m["values"][m["action"]] < max(legal)


def test_mistakes_are_printed_one_position_a_line(capsys):
    from jaxgames.analysis import Mistake, MistakeReport

    nan = float("nan")
    mistake = Mistake((0,), 1, (nan, -1.0, 0.0, -1.0, 0.0, -1.0, 0.0, -1.0, 0.0), 3)
    cli._print_mistakes(MistakeReport(10, 3, 40, 4, (mistake, mistake)), top=1)
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "  mistakes against perfect play: 4 of the agent's 40 moves lost value, in 3 of 10 "
        "games; 2 distinct positions",
        "    3 game(s): after moves 0 the agent played 1; move values [. -1 0 -1 0 -1 0 -1 0]",
    ]


def test_mistakes_need_a_game_with_a_perfect_player():
    import jaxgames

    with pytest.raises(cli.UsageError, match=r"--mistakes: no perfect player for Game\(hex"):
        cli._perfect_values(jaxgames.make("hex"))


def test_a_damaged_checkpoint_gives_one_line_not_orbaxs_tracebacks(trained, tmp_path):
    """After a failed restore, tensorstore's reads still finishing call back into orbax's
    closed event loop; through the installed command that noise must not follow the one-line
    error."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(trained, run)
    for f in run.glob("checkpoints/*/state/d/*"):
        f.write_bytes(b"garbage")
    done = jaxgames("eval", str(run), "--opponent", "random", "--games", "4")
    assert done.returncode == 2
    lines = [ln for ln in done.stderr.splitlines() if "WARNING" not in ln]
    assert len(lines) == 1 and "could not be restored" in lines[0], done.stderr[-2000:]


@pytest.mark.skipif(os.name != "posix", reason="signals")
@pytest.mark.slow  # 15-30 s; the in-process Ctrl-C test covers the stop flag
def test_ctrl_c_while_compiling_stops_cleanly(tmp_path):
    """Ctrl-C in the first seconds (while XLA compiles) used to crash the process (exit 139);
    the stop flag is set before compiling, so the run stops after it, cleanly."""
    run = tmp_path / "run"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jaxgames",
            "train",
            "tictactoe-td-farl",
            "--run-dir",
            str(run),
            "--no-progress",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode in (0, 130), err[-2000:]
    assert "Traceback" not in err


def test_deterministic_sets_the_xla_flag_before_jax_starts_and_refuses_after():
    """`train --deterministic` adds --xla_gpu_deterministic_ops=true to XLA_FLAGS (once, keeping
    the flags already there) before JAX starts its backend; afterwards it would do nothing, so
    it says so."""
    code = (
        "from jaxgames import cli; cli.deterministic_xla(); cli.deterministic_xla(); "
        "import os, jax.numpy as jnp; print(os.environ['XLA_FLAGS']); "
        "print(float(jnp.ones(2).sum()))"
    )
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    flags, total = out.stdout.split("\n")[:2]
    assert flags == "--xla_force_host_platform_device_count=2 --xla_gpu_deterministic_ops=true"
    assert total == "2.0"
    import jax.numpy as jnp

    jnp.zeros(1).block_until_ready()  # this process's backend is running
    with pytest.raises(ValueError, match="--deterministic must be set before JAX starts"):
        cli.deterministic_xla()
