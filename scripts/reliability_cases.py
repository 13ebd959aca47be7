"""Bad input and failures, tried through the `jaxgames` command: the cases and their messages.

    python scripts/reliability_cases.py docs/reliability.md

runs every case below with the command as a user types it (`python -m jaxgames ...`, one
process each, in a fresh folder beside a small trained TicTacToe run) and writes the page
that lists each with its exit status and the exact message. tests/test_reliability.py runs
the same cases in-process and asserts what each must give (exit status, one line, no
traceback, nothing on disk changed), so the page and the code cannot drift apart.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable

BASE_GAMES = 400  # the trained run every case starts from (TicTacToe TD-FARL)


@dataclasses.dataclass(frozen=True)
class Case:
    """One bad input.

    Attributes:
        group: the heading it is listed under.
        what: what is wrong, for people.
        argv: the command's arguments; "{run}" is a copy of the trained run, "{dir}" the
            case's own folder.
        match: a regular expression the message must match.
        code: the exit status it must give.
        setup: prepares `{run}` / `{dir}` before the command (the copy may be damaged here).
        unchanged: the run's files must be byte for byte the same afterwards.
        no_folder: the command, refused, must not have created its `--run-dir`.
    """

    group: str
    what: str
    argv: tuple[str, ...]
    match: str
    code: int = 2
    setup: Callable[[pathlib.Path, pathlib.Path], None] | None = None
    unchanged: bool = True
    no_folder: bool = False


def _meta_file(run: pathlib.Path) -> pathlib.Path:
    return next((run / "checkpoints").glob("*/meta/metadata"))


def _edit_meta(change: Callable[[dict], object]):
    def setup(run: pathlib.Path, folder: pathlib.Path) -> None:
        path = _meta_file(run)
        meta = json.loads(path.read_text())
        new = change(meta)
        path.write_text(json.dumps(meta if new is None else new))

    return setup


def _resave(transform: Callable):
    """Rewrites the run's checkpoint with `transform(carry)` (a damaged array, a counter of
    another type), as a careless or hostile tool would."""

    def setup(run: pathlib.Path, folder: pathlib.Path) -> None:
        import jax.numpy as jnp  # noqa: F401  (transforms use it)

        from jaxgames import checkpoint
        from jaxgames.builders import make_learner

        config, _, _, step = checkpoint.read_meta(run)
        learner = make_learner(config, with_chunk=False)
        carry, _ = checkpoint.restore(run, learner.init(__import__("jax").random.key(0)))
        shutil.rmtree(run / "checkpoints" / str(step))
        checkpoint.save(run, transform(carry), config, {"train_seconds": 1.0})

    return setup


def _link_meta(target: str):
    def setup(run: pathlib.Path, folder: pathlib.Path) -> None:
        path = _meta_file(run)
        path.unlink()
        if target == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to(target)

    return setup


def _append(name: str, text: str):
    def setup(run: pathlib.Path, folder: pathlib.Path) -> None:
        (folder / name).write_text(text)

    return setup


def _lock(run: pathlib.Path, folder: pathlib.Path) -> None:
    import fcntl

    handle = (run / ".lock").open("a+")
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    handle.truncate(0)
    handle.write("12345")
    handle.flush()
    _HELD.append(handle)


_HELD: list = []  # locks a case holds for its duration (another "process")

_TTT = ("--train.games", "600", "--no-progress")
_RESUME = ("--resume", "--new-schedule", *_TTT)  # past the schedule check, to what is tested
_CFG = "Configs and command lines"
_RUNS = "Checkpoints and runs"


def _garbage_arrays(run: pathlib.Path, folder: pathlib.Path) -> None:
    for f in next((run / "checkpoints").glob("*/state")).rglob("*"):
        if f.is_file() and f.parent.name == "d":
            f.write_bytes(b"garbage")


CASES = [
    Case(_CFG, "an unknown preset", ("train", "no-such-preset"), r"neither a file nor a preset"),
    Case(
        _CFG,
        "`--train.games -5`",
        ("train", "tictactoe-td-farl", "--train.games", "-5"),
        r"train\.games=-5: expected >= 1",
    ),
    Case(
        _CFG,
        "`--train.batch-size 0`",
        ("train", "tictactoe-td-farl", "--train.batch-size", "0"),
        r"train\.batch_size=0: expected >= 1",
    ),
    Case(
        _CFG,
        "a misspelt setting",
        ("train", "tictactoe-td-farl", "--train.gams", "10"),
        r"Unrecognized options",
    ),
    Case(
        _CFG,
        "an unknown schedule kind",
        ("train", "tictactoe-td-farl", "--algorithm.alpha.kind", "cosine"),
        r"cosine",
    ),
    Case(
        _CFG,
        "an unknown key in a YAML file",
        ("train", "{dir}/bad.yaml"),
        r"unknown key\(s\) 'lambd' in bad\.yaml\.algorithm",
        setup=_append(
            "bad.yaml",
            "game: {name: tictactoe}\napproximator: {kind: tabular}\nalgorithm: {lambd: 0.5}\n",
        ),
    ),
    Case(
        _CFG,
        "`--algorithm.sub-batch 100` at B = 256",
        ("train", "connect4-td-farl", "--run-dir", "{dir}/sub", "--algorithm.sub-batch", "100"),
        r"sub_batch=100 does not divide batch_size=256: expected a divisor of the batch",
        no_folder=True,
    ),
    Case(
        _CFG,
        "an unknown game in a YAML file",
        ("train", "{dir}/chess.yaml"),
        r"unknown game 'chess'",
        setup=_append("chess.yaml", "game: {name: chess}\napproximator: {kind: tabular}\n"),
    ),
    Case(_CFG, "an unknown command", ("frobnicate",), r"unknown command 'frobnicate'"),
    Case(
        _CFG,
        "an unknown opponent",
        ("eval", "{run}", "--opponent", "alphazero"),
        r"unknown opponent 'alphazero' for Game\(tictactoe\)",
    ),
    Case(
        _CFG,
        "`--opponent mcts:abc`",
        ("eval", "{run}", "--opponent", "mcts:abc"),
        r"N in mcts:N must be an integer",
    ),
    Case(
        _CFG,
        "`--epsilon 1.5`",
        ("eval", "{run}", "--opponent", "random", "--epsilon", "1.5"),
        r"expected a probability in \[0, 1\]",
    ),
    Case(
        _CFG,
        "`--opponent agent:` without a path",
        ("eval", "{run}", "--opponent", "agent:"),
        r"expected agent:PATH",
    ),
    Case(
        _CFG,
        "an illegal move for `inspect`",
        ("inspect", "{run}", "--moves", "4,4"),
        r"action 4 is not legal in this tictactoe position",
    ),
    Case(
        _CFG,
        "Connect Four features on TicTacToe",
        (
            "train",
            "tictactoe-tabular-q",
            "--approximator.kind",
            "linear",
            "--approximator.features",
            "fiar",
            "--run-dir",
            "{dir}/r",
        ),
        r"the 'fiar' features describe Connect Four boards",
    ),
    Case(
        _CFG,
        "a replay minibatch larger than the buffer",
        ("train", "tictactoe-cnn-dqn", "--algorithm.replay-batch", "50000"),
        r"replay_batch=50000: expected 1\.\.replay_size",
    ),
    Case(
        _CFG,
        "max/min Q-learning on three-player Nim",
        ("train", "nim3p-td-farl", "--algorithm.kind", "minimax_q"),
        r"max/min Q-learning needs a deterministic two-player zero-sum game",
    ),
    Case(
        _CFG,
        "an unknown optimizer",
        ("train", "tictactoe-cnn-dqn", "--approximator.optimizer", "rmsprop"),
        r"rmsprop",
    ),
    Case(
        _CFG,
        "a Hex board of 14",
        ("train", "hex6-td-farl", "--game.options.size", "14"),
        r"option size=14 of game 'hex' is out of range",
    ),
    Case(
        _CFG,
        "`base:` naming neither a file beside it nor a preset",
        ("train", "{dir}/mine.yaml", "--run-dir", "{dir}/r"),
        r"mine\.yaml: base='connect4-td-frl' is neither a file beside it nor a preset",
        setup=_append("mine.yaml", "base: connect4-td-frl\ntrain: {games: 1000}\n"),
        no_folder=True,
    ),
    Case(
        _CFG,
        "two files that name each other as `base:`",
        ("train", "{dir}/a.yaml", "--run-dir", "{dir}/r"),
        r"a\.yaml: its base chain loops: a\.yaml -> b\.yaml -> a\.yaml",
        setup=lambda run, folder: (
            (folder / "a.yaml").write_text("base: b.yaml\n"),
            (folder / "b.yaml").write_text("base: a.yaml\n"),
        ),
        no_folder=True,
    ),
    Case(
        _RUNS,
        "a path that does not exist",
        ("eval", "/nonexistent/run", "--opponent", "random"),
        r"no checkpoint at /nonexistent/run: the path does not exist",
    ),
    Case(
        _RUNS,
        "an empty folder",
        ("eval", "{dir}", "--opponent", "random"),
        r"no checkpoint found at",
    ),
    Case(
        _RUNS,
        "`--resume` with another game's config",
        ("train", "nim-td-farl", "--run-dir", "{run}", *_RESUME),
        r"cannot continue with this config: game tictactoe",
    ),
    Case(
        _RUNS,
        "array files overwritten with garbage",
        ("eval", "{run}", "--opponent", "random"),
        r"could not be restored",
        setup=_garbage_arrays,
        unchanged=False,
    ),
    Case(
        _RUNS,
        "metadata overwritten with garbage",
        ("eval", "{run}", "--opponent", "random"),
        r"has unreadable metadata",
        setup=lambda run, folder: _meta_file(run).write_text("{oops"),
        unchanged=False,
    ),
    # checkpoints that are not what their config says
    Case(
        "A checkpoint is what it claims or it is refused",
        "metadata edited to say Connect Four",
        ("eval", "{run}", "--opponent", "random"),
        r"array .* do not belong to that config",
        setup=_edit_meta(lambda m: m["config"]["game"].update(name="connect_four")),
        unchanged=False,
    ),
    Case(
        "A checkpoint is what it claims or it is refused",
        "a weight array rewritten with 10 elements",
        ("eval", "{run}", "--opponent", "random"),
        r"array \.params\['w'\] is float32\[10\]",
        setup=_resave(lambda c: c._replace(params={**c.params, "w": c.params["w"][:10]})),
        unchanged=False,
    ),
    Case(
        "A checkpoint is what it claims or it is refused",
        "... and resumed (training must not go on from it)",
        ("train", "tictactoe-td-farl", "--run-dir", "{run}", *_RESUME),
        r"float32\[10\]",
        setup=_resave(lambda c: c._replace(params={**c.params, "w": c.params["w"][:10]})),
        unchanged=False,
    ),
    Case(
        "A checkpoint is what it claims or it is refused",
        "weights saved as int8",
        ("eval", "{run}", "--opponent", "random"),
        r"is int8\[.*needs float32",
        setup=_resave(lambda c: c._replace(params={**c.params, "w": c.params["w"].astype("int8")})),
        unchanged=False,
    ),
    Case(
        "A checkpoint is what it claims or it is refused",
        "the game counter saved as a float",
        ("train", "tictactoe-td-farl", "--run-dir", "{run}", *_RESUME),
        r"\.games is float32\[\]",
        setup=_resave(lambda c: c._replace(games=c.games.astype("float32"))),
        unchanged=False,
    ),
    # metadata
    Case(
        "Loading reads bounded, well-formed metadata",
        "metadata that is a JSON list",
        ("eval", "{run}", "--opponent", "random"),
        r"the metadata is a list, expected a mapping",
        setup=_edit_meta(lambda m: [1, 2]),
        unchanged=False,
    ),
    Case(
        "Loading reads bounded, well-formed metadata",
        "`games: null` in the metadata",
        ("eval", "{run}", "--opponent", "random"),
        r"games is None, expected a count",
        setup=_edit_meta(lambda m: m.update(games=None)),
        unchanged=False,
    ),
    Case(
        "Loading reads bounded, well-formed metadata",
        '`average_count: "x"`',
        ("eval", "{run}", "--opponent", "random"),
        r"average_count is 'x', expected a count",
        setup=_edit_meta(lambda m: m.update(average_count="x")),
        unchanged=False,
    ),
    Case(
        "Loading reads bounded, well-formed metadata",
        "`average_count: 5` without averaged arrays",
        ("eval", "{run}", "--opponent", "random"),
        r"counts 5 averaged samples, but it holds no",
        setup=_edit_meta(lambda m: m.update(average_count=5)),
        unchanged=False,
    ),
    Case(
        "Loading reads bounded, well-formed metadata",
        "`batch_size: 1e12` in the metadata",
        ("eval", "{run}", "--opponent", "random"),
        r"train\.batch_size=1,000,000,000,000: expected at most",
        setup=_edit_meta(lambda m: m["config"]["train"].update(batch_size=10**12)),
        unchanged=False,
    ),
    Case(
        "Loading reads bounded, well-formed metadata",
        "metadata linked to /dev/zero",
        ("eval", "{run}", "--opponent", "random"),
        r"is not a regular file",
        setup=_link_meta("/dev/zero"),
        unchanged=False,
    ),
    Case(
        "Loading reads bounded, well-formed metadata",
        "metadata that is a FIFO",
        ("eval", "{run}", "--opponent", "random"),
        r"is not a regular file",
        setup=_link_meta("fifo"),
        unchanged=False,
    ),
    Case(
        "Loading reads bounded, well-formed metadata",
        "JSON nested 100,000 deep",
        ("eval", "{run}", "--opponent", "random"),
        r"nested too deeply",
        setup=lambda run, folder: _meta_file(run).write_text("[" * 100_000 + "]" * 100_000),
        unchanged=False,
    ),
    # non-finite values
    Case(
        "No NaN on disk; schedules are checked",
        "`--algorithm.alpha.start nan`",
        ("train", "tictactoe-td-farl", "--run-dir", "{dir}/nan", "--algorithm.alpha.start", "nan"),
        r"schedule start=nan: expected finite numbers",
    ),
    Case(
        "No NaN on disk; schedules are checked",
        "epsilon from 5 to -3",
        (
            "train",
            "tictactoe-td-farl",
            "--run-dir",
            "{dir}/eps",
            "--algorithm.epsilon.start",
            "5",
            "--algorithm.epsilon.end",
            "-3",
        ),
        r"epsilon .*a probability, expected start and end in \[0, 1\]",
    ),
    Case(
        "No NaN on disk; schedules are checked",
        "a run that diverges (identity output, alpha 1e4)",
        (
            "train",
            "tictactoe-td-farl",
            "--run-dir",
            "{dir}/div",
            "--approximator.output",
            "identity",
            "--algorithm.alpha.start",
            "1e4",
            "--algorithm.alpha.end",
            "1e4",
            "--train.games",
            "2000",
            "--train.checkpoint-every",
            "100",
            "--no-progress",
        ),
        r"NaN or infinite",
    ),
    # one run per folder
    Case(
        "One training per run folder",
        "a second `jaxgames train` into a folder in use",
        ("train", "tictactoe-td-farl", "--run-dir", "{run}", *_RESUME),
        r"in use by a running jaxgames train \(process 12345\)",
        setup=_lock,
        unchanged=False,
    ),
    Case(
        "One training per run folder",
        "a fresh run into a folder with records but no checkpoint",
        ("train", "tictactoe-td-farl", "--run-dir", "{dir}", *_TTT),
        r"holds the records of an earlier run \(metrics.jsonl\) but no checkpoint",
        setup=_append("metrics.jsonl", '{"kind": "train", "train_games": 100}\n'),
    ),
    Case(
        "One training per run folder",
        "a fresh run into a folder that holds a run",
        ("train", "tictactoe-td-farl", "--run-dir", "{run}", *_TTT),
        r"already holds a run",
    ),
    # one line
    Case(
        "One line, never a traceback",
        "`eval --seed 2**64`",
        ("eval", "{run}", "--opponent", "random", "--seed", str(2**64)),
        r"expected a seed in \[0, 2\^32\)",
    ),
    Case(
        "One line, never a traceback",
        "`train.seed: 2**64` in a YAML file",
        ("train", "{dir}/seed.yaml", "--run-dir", "{dir}/r"),
        r"train\.seed=\d+: expected an integer in \[0, 2\^32\)",
        setup=_append(
            "seed.yaml",
            "game: {name: tictactoe}\napproximator: {kind: tabular}\n"
            f"train: {{seed: {2**64}}}\n",
        ),
    ),
    Case(
        "One line, never a traceback",
        "a YAML list nested 10,000 deep",
        ("train", "{dir}/deep.yaml", "--run-dir", "{dir}/r"),
        r"nested too deeply",
        setup=_append("deep.yaml", "a: " + "[" * 10_000 + "]" * 10_000 + "\n"),
    ),
    Case(
        "One line, never a traceback",
        "a run folder that is a loop of symbolic links",
        ("eval", "{dir}/loop", "--opponent", "random"),
        r"Symlink loop|symbolic link",
        setup=lambda run, folder: (
            (folder / "loop").symlink_to(folder / "loop2"),
            (folder / "loop2").symlink_to(folder / "loop"),
        ),
    ),
    Case(
        "One line, never a traceback",
        "a batch that needs terabytes",
        ("train", "connect4-td-farl", "--run-dir", "{dir}/big", "--train.batch-size", "4000000"),
        r"needs [\d,.]+ GB for the training step",
        no_folder=True,
    ),
    Case(
        "One line, never a traceback",
        "`eval --games` in the billions",
        ("eval", "{run}", "--opponent", "random", "--games", "3000000000"),
        r"expected at most 1,000,000 games",
    ),
    Case(
        "One line, never a traceback",
        "`--resume --train.devices 64` on a machine with fewer devices",
        ("train", "tictactoe-td-farl", "--run-dir", "{run}", "--resume", "--train.devices", "64"),
        r"train.devices=64: only \d+ device\(s\) visible .*expected at most",
    ),
    # validation that wastes no run
    Case(
        "Validation that wastes no run",
        "an unknown `eval.opponent` in a YAML file",
        ("train", "{dir}/opp.yaml", "--run-dir", "{dir}/r"),
        r"eval\.opponent: unknown opponent 'alphazero'",
        setup=_append(
            "opp.yaml",
            "game: {name: tictactoe}\napproximator: {kind: tabular}\neval: {opponent: alphazero}\n",
        ),
    ),
    Case(
        "Validation that wastes no run",
        "`random_opening_moves: 1000000`",
        (
            "train",
            "tictactoe-td-farl",
            "--run-dir",
            "{dir}/r",
            "--algorithm.random-opening-moves",
            "1000000",
        ),
        r"random_opening_moves=1000000: expected at most 9",
    ),
    Case(
        "Validation that wastes no run",
        "a key given twice in a YAML file",
        ("train", "{dir}/dup.yaml", "--run-dir", "{dir}/r"),
        r"the key 'game' is given twice",
        setup=_append("dup.yaml", "game: {name: tictactoe}\ngame: {name: nim}\n"),
    ),
    Case(
        "Validation that wastes no run",
        "`eval --openings 100` on TicTacToe",
        ("eval", "{run}", "--opponent", "random", "--openings", "100"),
        r"no tictactoe game is longer than 9",
    ),
    Case(
        "Validation that wastes no run",
        "a stray folder `checkpoints/²` (a digit to str.isdigit)",
        ("eval", "{run}", "--opponent", "random", "--games", "5", "--json"),
        r'"games": 10',
        code=0,
        setup=lambda run, folder: (run / "checkpoints" / "\u00b2").mkdir(),
        unchanged=False,
    ),
    # interrupts, resumes, logs
    Case(
        "Resumes and logs that stay consistent",
        "`--resume` of a finished run",
        (
            "train",
            "tictactoe-td-farl",
            "--run-dir",
            "{run}",
            "--resume",
            "--train.games",
            str(BASE_GAMES),
            "--no-progress",
        ),
        r"has played its \d+ games .*nothing to do",
        code=0,
    ),
    Case(
        "Resumes and logs that stay consistent",
        "`--resume --train.games 14000` of a 400-game run",
        (
            "train",
            "tictactoe-td-farl",
            "--run-dir",
            "{run}",
            "--resume",
            "--train.games",
            "14000",
            "--no-progress",
        ),
        r"changes the schedules .*Pass --new-schedule",
    ),
    Case(
        "Resumes and logs that stay consistent",
        "`eval` of a TicTacToe and a Nim run together",
        ("eval", "{run}", "{dir}/nim", "--opponent", "random"),
        r"play different games",
        setup=lambda run, folder: shutil.copytree(
            pathlib.Path(__file__).resolve().parents[1] / "tests/data/checkpoints-0.1.0/td",
            folder / "nim",
        ),
    ),
]


def run_case(
    case: Case, run: pathlib.Path, folder: pathlib.Path, subprocess_: bool
) -> tuple[int, str]:
    """(exit status, what it printed: stderr, or stdout for a case that succeeds) of one
    case, through a subprocess or in-process through `cli.main`."""
    argv = [a.format(run=run, dir=folder) for a in case.argv]
    if subprocess_:
        done = subprocess.run(
            [sys.executable, "-m", "jaxgames", *argv],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "JAXGAMES_DEBUG": ""},
        )
        code, out, err = done.returncode, done.stdout, done.stderr
    else:
        from jaxgames import cli

        out_buffer, err_buffer = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out_buffer), contextlib.redirect_stderr(err_buffer):
            try:
                code = cli.main(argv)
            except SystemExit as e:  # the typed parser exits by itself
                code = int(e.code or 0)
        out, err = out_buffer.getvalue(), err_buffer.getvalue()
    return code, (out if code == 0 else err)


def digest(folder: pathlib.Path) -> dict[str, str]:
    """sha256 of every file below a folder (links and special files by their name only; not
    the run's lock file, which holds the process id of its last trainer)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.name == ".lock":
            continue
        if p.is_symlink() or not p.is_file():
            out[str(p.relative_to(folder))] = "-"
        else:
            out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def train_base(folder: pathlib.Path) -> pathlib.Path:
    """The small trained run every case starts from."""
    run = folder / "base"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxgames",
            "train",
            "tictactoe-td-farl",
            "--run-dir",
            str(run),
            "--train.games",
            str(BASE_GAMES),
            "--train.chunk-steps",
            "10",
            "--eval.games",
            "10",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return run


def said(text: str) -> list[str]:
    """The lines a case printed, without library warnings and the progress notice that
    `train` prints before it compiles (a failure found while compiling follows it)."""
    return [
        ln
        for ln in text.strip().splitlines()
        if "WARNING" not in ln and not ln.startswith("compiling the training step")
    ]


def message(text: str) -> str:
    """What a case printed as one string: the lines joined (the typed parser wraps its box's
    text), without the box's rules, library warnings and the compiling notice."""
    lines = [ln.strip(" │╭╰─╮╯") for ln in said(text)]
    lines = [ln for ln in lines if ln and not set(ln) <= set("-─")]
    return re.sub(r"\s+", " ", " ".join(lines)).strip()


def write_doc(path: pathlib.Path) -> None:
    rows: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = train_base(pathlib.Path(tmp))
        for i, case in enumerate(CASES):
            folder = pathlib.Path(tmp) / f"case{i}"
            folder.mkdir()
            run = folder / "run"
            shutil.copytree(base, run)
            if case.setup:
                case.setup(run, folder)
            code, text = run_case(case, run, folder, subprocess_=True)
            for handle in _HELD:
                handle.close()
            _HELD.clear()
            shown = message(text).replace(tmp, "...").replace("|", "\\|")
            note = " (no run folder is written)" if case.no_folder else ""
            rows.setdefault(case.group, []).append(f"| {case.what} | {code} | `{shown}`{note} |")
    lines = [
        "# Bad input and failures: what was tried, what each gives",
        "",
        "Written by `python scripts/reliability_cases.py docs/reliability.md`: every case below",
        "was run through the command (`python -m jaxgames ...`, one process each) in a fresh",
        "folder beside a small trained TicTacToe run (`run`), which some cases damage first as",
        "their row says. tests/test_reliability.py runs the same cases and checks each: its exit",
        "status, one line without a traceback (the typed parser of `train` draws a box), and",
        "that no file of the run changed where nothing should (and that a refused new run",
        "wrote no folder, where its row says so). An error that is a bug of",
        "jaxgames prints one line too (status 1); JAXGAMES_DEBUG=1 shows its traceback. The",
        "guarantees of the earlier checks hold as well: SIGKILL at any moment resumes bit for",
        "bit, a full disk keeps the previous checkpoint, damaged array files give an error that",
        "names an older checkpoint (tests/test_checkpoint.py, tests/test_cli.py).",
        "",
    ]
    for group, group_rows in rows.items():
        lines += [
            f"## {group}",
            "",
            "| input | exit | what it prints |",
            "|---|---:|---|",
            *group_rows,
            "",
        ]
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    write_doc(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "docs/reliability.md"))
