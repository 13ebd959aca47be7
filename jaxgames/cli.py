"""The `jaxgames` command (also `python -m jaxgames`).

    jaxgames train [CONFIG] [--run-dir DIR] [--resume [--new-schedule]] [--no-progress]
                   [--deterministic] [--distributed [--coordinator HOST:PORT
                   --num-processes N --process-id I]] [--section.key VALUE ...]
    jaxgames eval PATH [PATH ...] --opponent NAME [--games N] [--seats all|first|second]
                       [--openings K] [--epsilon E] [--mistakes N] [--weights average|last]
                       [--seed S] [--devices D] [--record DIR] [--json]
    jaxgames play PATH [--seat first|second] [--seed S]
    jaxgames inspect PATH [--moves 3,3,4] [--svg FILE]
    jaxgames presets
    jaxgames bench games|learning [ARGS ...]

CONFIG is a preset name (`jaxgames presets` lists them; default: tictactoe-td-farl) or a YAML
file; the config overrides after it are typed and validated by tyro (`--help` after CONFIG
lists them all). PATH is a run folder or one checkpoint folder. Errors print one line saying
what is wrong and what to do, and exit with status 2 (Ctrl-C during training saves a
checkpoint first: status 130). An error that is a bug of jaxgames prints one line too (status
1); set JAXGAMES_DEBUG=1 (or pass --debug first) to see its traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import pathlib
import runpy
import sys
import threading
import warnings

REPO = pathlib.Path(__file__).resolve().parents[1]
MAX_EVAL_GAMES = 1_000_000  # games per seat (and per opening)
DEFAULT_PRESET = "tictactoe-td-farl"


class UsageError(ValueError):
    """Bad command-line input."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad argument in one line (and the usage only on --help)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def cmd_presets(argv: list[str]) -> int:
    from jaxgames import presets

    _Parser(
        prog="jaxgames presets", description="The presets, each with its first sentence."
    ).parse_args(argv)
    names = presets.names()
    width = max(map(len, names))
    for name in names:
        print(f"{name:<{width}}  {presets.summary(name)}")
    return 0


def cmd_train(argv: list[str]) -> int:
    import tyro

    from jaxgames import presets
    from jaxgames.config import as_config, cli_type, load_config, with_kind
    from jaxgames.training import train

    name = argv[0] if argv and not argv[0].startswith("-") else DEFAULT_PRESET
    rest = argv[1:] if argv and not argv[0].startswith("-") else argv
    front = _Parser(prog="jaxgames train", add_help=False)
    front.add_argument("--run-dir", type=pathlib.Path)
    front.add_argument("--resume", action="store_true")
    front.add_argument("--no-progress", action="store_true")
    front.add_argument("--new-schedule", action="store_true")
    front.add_argument("--deterministic", action="store_true")
    front.add_argument("--distributed", action="store_true")
    front.add_argument("--coordinator")
    front.add_argument("--num-processes", type=int)
    front.add_argument("--process-id", type=int)
    front.add_argument("--approximator.kind", dest="approximator_kind")
    front.add_argument("--algorithm.kind", dest="algorithm_kind")
    flags, overrides = front.parse_known_args(rest)
    if flags.deterministic:
        deterministic_xla()
    if flags.distributed:
        start_distributed(flags.coordinator, flags.num_processes, flags.process_id)
    elif any(v is not None for v in (flags.coordinator, flags.num_processes, flags.process_id)):
        raise UsageError("--coordinator, --num-processes and --process-id need --distributed")
    path = presets.path(name)
    base = load_config(path)
    # a kind of another settings type is switched to first, so that its own settings follow
    for section in ("approximator", "algorithm"):
        kind = getattr(flags, f"{section}_kind")
        if kind is not None:
            base = with_kind(base, section, kind)
    special = cli_type(base)
    config = as_config(
        tyro.cli(
            special,
            default=special(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)}),
            args=overrides,
            prog=f"jaxgames train {name}",
            description="Overrides of the preset's settings, section by section.",
        )
    )
    run_dir = flags.run_dir or pathlib.Path("runs") / path.stem
    how = {
        "run_dir": run_dir,
        "progress": not flags.no_progress,
        "resume": flags.resume,
        "new_schedule": flags.new_schedule,
    }
    if config.train.seeds > 1:
        return _train_seeds(config, how, name)
    result = train(config, **how)
    if flags.distributed and _process_index() != 0:
        return 0  # process 0 reports
    final = result.history[-1] if result.history else None
    games = int(result.carry.games)
    if result.already_complete:
        print(
            f"the run in {run_dir} has played its {games:,} games (train.games "
            f"{config.train.games:,}); nothing to do (raise --train.games to go on)"
        )
        return 0
    if result.interrupted:
        print(
            f"stopped after {games:,} games; checkpoint saved in {run_dir}/checkpoints "
            f"(continue with: jaxgames train {name} --run-dir {run_dir} --resume)"
        )
        return 130
    print(f"trained {games:,} games in {result.wall_time:.1f}s; run folder: {run_dir}")
    if final:
        print(f"evaluation against {config.eval.opponent}: {_result_line(final)}")
    return 0


def _train_seeds(config, how: dict, name: str) -> int:
    """`jaxgames train` with train.seeds > 1 (`how`: train's keyword arguments): every agent
    in one process, one line each."""
    from jaxgames.training import train_seeds

    results = train_seeds(config, **how)
    run_dir = how["run_dir"]
    seeds = range(config.train.seed, config.train.seed + config.train.seeds)
    if all(r.already_complete for r in results):
        print(f"the {len(results)} agents in {run_dir} have played their games; nothing to do")
        return 0
    if results[0].interrupted:
        print(
            f"stopped; checkpoints saved in {run_dir}/seed-*/checkpoints (continue with: "
            f"jaxgames train {name} --run-dir {run_dir} --train.seeds {config.train.seeds} "
            f"--train.seed {config.train.seed} --resume)"
        )
        return 130
    print(
        f"trained {len(results)} agents of {config.train.games:,} games in "
        f"{results[0].wall_time:.1f}s; run folders: {run_dir}/seed-{seeds[0]} .. "
        f"seed-{seeds[-1]} (jaxgames eval {run_dir} --opponent ... evaluates them all)"
    )
    finals = [r.history[-1] for r in results if r.history]
    for seed, final in zip(seeds, finals, strict=False):
        print(f"  seed {seed} against {config.eval.opponent}: {_result_line(final)}")
    if len(finals) > 1:
        import statistics

        scores = [f["score"] for f in finals]
        print(
            f"  mean score {statistics.mean(scores):+.3f} (std {statistics.stdev(scores):.3f}, "
            f"range {min(scores):+.3f} to {max(scores):+.3f}) over {len(finals)} agents"
        )
    return 0


def _seed_folders(paths: list[pathlib.Path]) -> list[pathlib.Path]:
    """The paths to evaluate: a run of several seeds (RUN/seed-S folders, no checkpoints of
    its own) stands for its agents, in seed order."""
    out = []
    for path in paths:
        folders = sorted(
            (p for p in path.glob("seed-*") if (p / "checkpoints").is_dir()),
            key=lambda p: int(p.name.split("-", 1)[1]) if p.name[5:].isdigit() else -1,
        )
        if path.is_dir() and not (path / "checkpoints").exists() and folders:
            out.extend(folders)
        else:
            out.append(path)
    return out


DETERMINISTIC_FLAG = "--xla_gpu_deterministic_ops=true"


def _process_index() -> int:
    import jax

    return jax.process_index()


def start_distributed(coordinator: str | None, processes: int | None, process: int | None):
    """Joins this process to a multi-process run (`jax.distributed.initialize`): the
    coordinator's HOST:PORT, the number of processes and this one's index, each read from
    the environment where Slurm or Open MPI set them when not given. CPUs communicate
    through gloo."""
    import jax

    given = [v for v in (coordinator, processes, process) if v is not None]
    if given and len(given) < 3:
        raise UsageError(
            "--distributed: give all of --coordinator HOST:PORT, --num-processes N and "
            "--process-id I, or none of them (read from Slurm's or Open MPI's environment)"
        )
    if processes is not None and process is not None and not 0 <= process < processes:
        raise UsageError(f"--process-id {process}: expected 0 to {processes - 1}")
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    try:
        jax.distributed.initialize(coordinator, processes, process)
    except (RuntimeError, ValueError) as e:
        raise UsageError(f"--distributed: {str(e).splitlines()[0][:300]}") from None


def deterministic_xla() -> None:
    """Asks XLA for deterministic kernels (GPU scatter-adds without float atomics: slower, but
    a seed gives the same weights every run); XLA:CPU is deterministic anyway. Must run before
    JAX starts its backend, so it refuses once one is running."""
    try:
        from jax._src import xla_bridge  # no public way to ask; skip the check if it moves

        started = xla_bridge.backends_are_initialized()
    except (ImportError, AttributeError):
        started = False
    if started:
        raise ValueError("--deterministic must be set before JAX starts (it sets XLA_FLAGS)")
    flags = os.environ.get("XLA_FLAGS", "")
    if DETERMINISTIC_FLAG not in flags.split():
        os.environ["XLA_FLAGS"] = f"{flags} {DETERMINISTIC_FLAG}".strip()


def _result_line(r: dict) -> str:
    return (
        f"score {r['score']:+.3f} +- {r['ci95']:.3f}, win rate {r['win_rate']:.3f}, "
        f"points {r['points']:.3f}, W/D/L {r['wins']}/{r['draws']}/{r['losses']} of {r['games']}"
    )


def cmd_eval(argv: list[str]) -> int:
    parser = _Parser(
        prog="jaxgames eval",
        description="Evaluate a checkpoint against an opponent; given several runs or "
        "checkpoints, evaluate each the same way and summarise them (mean, spread).",
    )
    parser.add_argument("paths", type=pathlib.Path, nargs="+", metavar="path")
    parser.add_argument(
        "--opponent",
        required=True,
        help="random, perfect, perfect-dl, perfect-dl-gbg (Connect Four), mcts:N, heur, "
        "bench (Othello), or agent:PATH (another run or checkpoint of the same game, "
        "playing greedily)",
    )
    parser.add_argument("--games", type=_games, default=500, help="games per seat")
    parser.add_argument("--seats", choices=["all", "first", "second"], default="all")
    parser.add_argument(
        "--openings",
        type=_non_negative,
        default=0,
        help="start from every opening of this many plies",
    )
    parser.add_argument(
        "--epsilon",
        type=float,
        default=0.0,
        help="the agent plays a random move with this probability (epsilon-greedy)",
    )
    parser.add_argument(
        "--mistakes",
        type=_non_negative,
        default=0,
        help="also list the agent's moves that lost value against perfect play (games with "
        "a perfect player: TicTacToe, Nim, Nim3P, Connect Four), this many positions, the "
        "most frequent first",
    )
    parser.add_argument(
        "--weights",
        choices=["average", "last"],
        default="average",
        help="play with the averaged parameters of a run that kept them (train.average_from; "
        "the default) or with the latest ones",
    )
    parser.add_argument("--seed", type=_seed, default=0)
    parser.add_argument(
        "--devices",
        type=_devices,
        default=0,
        help="split the games over this many of the visible devices (0, the default: all of "
        "them, as many as divide the number of games)",
    )
    parser.add_argument(
        "--record",
        type=pathlib.Path,
        metavar="DIR",
        help="write the games played to DIR: games.json (every game's moves, seat and reward) "
        "and a picture of each of the first 20 games (SVG, deterministic games)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (several paths: {'checkpoints': [...], 'summary': {...}})",
    )
    args = parser.parse_args(argv)
    if not 0.0 <= args.epsilon <= 1.0:
        raise UsageError(f"--epsilon {args.epsilon}: expected a probability in [0, 1]")
    from jaxgames.checkpoint import read_meta

    args.paths = _seed_folders(args.paths)
    metas = [read_meta(path) for path in args.paths]  # a bad path fails before any evaluation
    games = {(m[0].game.name, tuple(sorted(m[0].game.options.items()))) for m in metas}
    if len(games) > 1:
        names = ", ".join(sorted(f"{n} {dict(o)}" for n, o in games))
        raise UsageError(
            f"these checkpoints play different games ({names}); evaluate and average the "
            "checkpoints of one game at a time"
        )
    opponents: dict = {}
    records = [_evaluate(path, args, opponents) for path in args.paths]
    summary = _summary(records) if len(records) > 1 else None
    if args.json:
        print(
            json.dumps(
                records[0] if summary is None else {"checkpoints": records, "summary": summary}
            )
        )
    elif summary is not None:
        print(
            f"over {summary['checkpoints']} checkpoints against {args.opponent}: win rate "
            f"{_spread(summary, 'win_rate')}, points {_spread(summary, 'points')}, score "
            f"{summary['score']:+.3f}; W/D/L {summary['wins']}/{summary['draws']}/"
            f"{summary['losses']} of {summary['games']} in all"
        )
    return 0


def _evaluate(path: pathlib.Path, args, opponents: dict) -> dict:
    """Evaluates one run or checkpoint as `cmd_eval`'s arguments say, prints it unless
    --json, and returns its record. `opponents` caches the opponent by game."""
    import jax

    from jaxgames.agent import load
    from jaxgames.analysis import mistakes
    from jaxgames.evaluation import arena, opening_moves
    from jaxgames.opponents import epsilon_greedy

    agent = load(path, weights=args.weights)
    game_key = (agent.game.name, repr(agent.game.options))
    if game_key not in opponents:
        opponents[game_key] = _opponent(args.opponent, agent.game)
    values = _perfect_values(agent.game) if args.mistakes else None
    policy = epsilon_greedy(agent.batched(), args.epsilon) if args.epsilon else agent.batched()
    openings = opening_moves(agent.game, args.openings) if args.openings else None
    result = arena(
        agent.game,
        policy,
        opponents[game_key],
        args.games,
        jax.random.key(args.seed),
        seats=args.seats,
        openings=openings,
        record_moves=values is not None or args.record is not None,
        devices=args.devices,
    )
    if args.record is not None:
        _record_games(agent.game, result, args.record / pathlib.Path(path).name, args.opponent)
    report = mistakes(agent.game, result, values) if values is not None else None
    from jaxgames.checkpoint import versions

    record = {
        **result.to_dict(),
        **_solo_details(agent.game, result),
        "game": {
            "name": agent.game.name,
            "options": dict(agent.game.options),
            "version": agent.game.version,
        },
        "seed": args.seed,
        "versions": versions(),
        "opponent": args.opponent,
        "seats": args.seats,
        "epsilon": args.epsilon,
        "checkpoint": str(agent.path),
        "train_games": agent.meta.get("games"),
        "average_count": agent.average_count,
    }
    if report is not None:
        record["mistakes"] = report.to_dict(top=args.mistakes)
    if args.json:
        return record
    print(
        f"{agent.game!r}, checkpoint {agent.path} ({record['train_games']:,} games"
        f"{_weights_note(agent)}) against {args.opponent}: {_result_line(record)}"
    )
    for seat, r in result.by_seat.items():
        print(f"  as player {seat}: {r}")
    if "score_median" in record:
        print(
            f"  scores: median {record['score_median']:,.0f}, lowest "
            f"{record['score_min']:,.0f}, best {record['score_max']:,.0f}"
        )
    if "top_tile_share" in record:
        shares = ", ".join(
            f">= {tile}: {share:.0%}" for tile, share in record["top_tile_share"].items()
        )
        print(f"  highest tile {shares}")
    if report is not None:
        _print_mistakes(report, args.mistakes)
    return record


def _record_games(game, result, folder: pathlib.Path, opponent: str, pictures: int = 20) -> None:
    """games.json (every game's moves, the agent's seat and its reward) and a strip of frames
    per game for the first `pictures` games of a deterministic game."""
    from jaxgames.render import render_game_svg, replay

    folder.mkdir(parents=True, exist_ok=True)
    games = [
        {"moves": list(m), "agent_seat": int(seat), "agent_reward": float(r), "opening": int(k)}
        for m, seat, r, k in zip(
            result.moves,
            result.agent_players,
            result.scores,
            result.opening_plies,
            strict=True,
        )
    ]
    (folder / "games.json").write_text(
        json.dumps(
            {
                "game": game.name,
                "options": dict(game.options),
                "opponent": opponent,
                "games": games,
            },
            indent=1,
        )
    )
    if game.stochastic:
        return
    for i, moves in enumerate(result.moves[:pictures]):
        svg = render_game_svg(game, replay(game, moves), moves)
        (folder / f"game{i:03d}.svg").write_text(svg)


def _weights_note(agent) -> str:
    n = agent.average_count
    return f", mean of {n} parameter sample{'s' * (n != 1)}" if n else ""


def _summary(records: list[dict]) -> dict:
    """Several checkpoints' results side by side: each rate's mean over the checkpoints (every
    checkpoint weighs the same, as in GBG's averages over runs), its standard deviation
    between checkpoints and its range; the game counts summed."""
    import numpy as np

    summary: dict = {"checkpoints": len(records)}
    for key in ("win_rate", "points"):
        values = np.array([r[key] for r in records], np.float64)
        summary[key] = float(values.mean())
        summary[f"{key}_sd"] = float(values.std(ddof=1))
        summary[f"{key}_min"] = float(values.min())
        summary[f"{key}_max"] = float(values.max())
    summary["score"] = float(np.mean([r["score"] for r in records]))
    for key in ("games", "wins", "draws", "losses"):
        summary[key] = int(sum(r[key] for r in records))
    return summary


def _spread(summary: dict, key: str) -> str:
    return (
        f"{summary[key]:.3f} (sd {summary[f'{key}_sd']:.3f}, {summary[f'{key}_min']:.3f} to "
        f"{summary[f'{key}_max']:.3f})"
    )


def _perfect_values(game):
    from jaxgames.opponents import perfect_values

    try:
        return perfect_values(game)
    except ValueError as e:
        raise UsageError(f"--mistakes: {e}") from None


def _print_mistakes(report, top: int) -> None:
    print(
        f"  mistakes against perfect play: {report.mistakes} of the agent's "
        f"{report.agent_moves} moves lost value, in {report.games_with_mistakes} of "
        f"{report.games} games; {len(report.positions)} distinct positions"
    )
    for m in report.positions[:top]:
        values = " ".join("." if math.isnan(v) else "0" if v == 0 else f"{v:+g}" for v in m.values)
        moves = ",".join(map(str, m.moves)) or "(none)"
        print(
            f"    {m.games} game(s): after moves {moves} the agent played {m.action}; "
            f"move values [{values}]"
        )


def _opponent(name: str, game):
    """The opponent called `name` for `game`: a named player, or `agent:PATH`, the greedy
    policy of another trained agent of the same game."""
    from jaxgames.agent import load
    from jaxgames.opponents import make_opponent

    if not name.startswith("agent:"):
        return make_opponent(name, game)
    path = name.split(":", 1)[1]
    if not path:
        raise UsageError(f"--opponent {name!r}: expected agent:PATH with a run or checkpoint")
    other = load(path)
    if (other.game.name, other.game.options) != (game.name, game.options):
        raise UsageError(
            f"--opponent {name!r} plays {other.game!r}; the evaluated agent plays {game!r}"
        )
    return other.batched()


def _solo_details(game, result) -> dict:
    """One-player games: the score distribution; 2048: also the highest tiles reached."""
    if game.num_players != 1:
        return {}
    details = {f"score_{k}": v for k, v in result.score_quantiles().items()}
    if game.name == "2048":
        from jaxgames.analysis import tile_shares

        shares = tile_shares(result.final_boards)
        details["top_tile_share"] = {str(tile): share for tile, share in shares.items()}
    return details


def _is_int(text: str) -> bool:
    """Whether `text` is an integer in ASCII digits, maybe negative (str.isdigit alone also
    accepts superscripts and other scripts' digits, which int() refuses or reads)."""
    digits = text.lstrip("-")
    return digits.isascii() and digits.isdigit()


def _seed(text: str) -> int:
    value = int(text)
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"expected a seed in [0, 2^32), got {text}")
    return value


def _devices(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a count >= 0 (0 = all devices), got {text}")
    return value


def _games(text: str) -> int:
    value = _positive(text)
    if value > MAX_EVAL_GAMES:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_EVAL_GAMES:,} games, got {text}")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text}")
    return value


def cmd_play(argv: list[str], input_fn=input, out=print) -> int:
    import jax

    from jaxgames.agent import load
    from jaxgames.core import checked_step, legal_actions

    parser = _Parser(
        prog="jaxgames play", description="Play against a trained agent in the terminal."
    )
    parser.add_argument("path", type=pathlib.Path)
    parser.add_argument(
        "--seat",
        choices=["first", "second"],
        default="first",
        help="which seat you take (player 0 moves first)",
    )
    parser.add_argument("--seed", type=_seed, default=0)
    args = parser.parse_args(argv)
    agent = load(args.path)
    game = agent.game
    if game.num_players != 2:
        raise UsageError(f"play supports two-player games; {game.name} has {game.num_players}")
    human = 0 if args.seat == "first" else 1
    policy = jax.jit(agent.policy)
    key = jax.random.key(args.seed)
    state = game.init(key)
    out(
        f"{game!r}: you are player {human} ({'X' if human == 0 else 'O'}). "
        "Type a move number, '?' for the legal moves, 'q' to quit."
    )
    while not bool(state.terminated):
        out(game.render(state))
        legal = legal_actions(state)
        if int(state.current_player) == human:
            try:
                text = input_fn(f"your move {legal}: ").strip()
            except EOFError:
                out("bye")
                return 0
            if text in ("q", "quit", "exit"):
                out("bye")
                return 0
            if text in ("?", "help", ""):
                out("legal moves: " + ", ".join(f"{a} ({game.action_names[a]})" for a in legal))
                continue
            try:
                state = checked_step(game, state, int(text))
            except ValueError as e:
                message = (
                    str(e)
                    if _is_int(text)
                    else (f"{text!r} is not a move number; legal moves: {legal}")
                )
                out(f"not played: {message}")
        else:
            key, sub = jax.random.split(key)
            action = int(policy(state, sub))
            out(f"agent plays {action} ({game.action_names[action]})")
            state = game.step(state, jax.numpy.int32(action), sub)
    out(game.render(state))
    reward = float(state.rewards[human])
    out("you win!" if reward > 0 else "you lose." if reward < 0 else "a draw.")
    return 0


def cmd_inspect(argv: list[str]) -> int:
    import jax
    import numpy as np

    from jaxgames.agent import load
    from jaxgames.core import checked_step

    parser = _Parser(
        prog="jaxgames inspect", description="What a checkpoint holds, and its move values."
    )
    parser.add_argument("path", type=pathlib.Path)
    parser.add_argument(
        "--moves",
        default="",
        help="comma-separated moves from the start; shows the agent's values there",
    )
    parser.add_argument(
        "--svg", type=pathlib.Path, help="also draw the position with the values to this file"
    )
    args = parser.parse_args(argv)
    agent = load(args.path)
    cfg, meta = agent.config, agent.meta
    print(f"checkpoint   {agent.path}")
    print(f"game         {agent.game!r}")
    print(
        f"trained      {meta.get('games', 0):,} games, {meta.get('moves', 0):,} moves, "
        f"{meta.get('train_seconds', 0):.1f}s of training"
    )
    print("versions     " + ", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items()))
    shape, parameters = agent.learner.model.describe(agent.params)
    print(f"approximator {cfg.approximator.kind}: {shape}")
    print(f"algorithm    {agent.learner.settings.describe()}, batch {cfg.train.batch_size}")
    print(f"parameters   {parameters}")
    state = agent.game.init(jax.random.key(0))
    moves = [m for m in args.moves.replace(" ", "").split(",") if m]
    for i, m in enumerate(moves):
        if not _is_int(m):
            raise UsageError(f"--moves: {m!r} (move {i}) is not an integer")
        state = checked_step(agent.game, state, int(m))
    print(f"position after moves {moves or '[]'} (player {int(state.current_player)} to move):")
    print(agent.game.render(state))
    if bool(state.terminated):
        print("the game is over")
        return 0
    values = agent.move_values(state)
    for a in np.flatnonzero(np.isfinite(values)):
        print(f"  {a:>3} {agent.game.action_names[a]:<20} {values[a]:+.4f}")
    if args.svg:
        from jaxgames.render import render_svg

        last = int(moves[-1]) if moves else None
        args.svg.write_text(render_svg(agent.game, state, last_action=last, values=values))
        print(f"drew the position to {args.svg}")
    return 0


def cmd_bench(argv: list[str]) -> int:
    names = {"games": "games.py", "learning": "learning.py"}
    usage = (
        "usage: jaxgames bench games|learning [ARGS ...]  (`jaxgames bench games --help` "
        "lists a benchmark's options; they run from a source checkout)"
    )
    if argv[:1] in (["-h"], ["--help"]):
        print(usage)
        return 0
    if not argv or argv[0] not in names:
        raise UsageError(f"bench needs one of: {', '.join(names)} (then that benchmark's options)")
    script = REPO / "benchmarks" / names[argv[0]]
    if not script.is_file():
        raise UsageError(f"{script} not found: benchmarks run from a source checkout")
    sys.argv = [f"jaxgames bench {argv[0]}", *argv[1:]]
    runpy.run_path(str(script), run_name="__main__")
    return 0


COMMANDS = {
    "train": cmd_train,
    "eval": cmd_eval,
    "play": cmd_play,
    "inspect": cmd_inspect,
    "presets": cmd_presets,
    "bench": cmd_bench,
}


def main(argv: list[str] | None = None) -> int:
    from jaxgames.errors import CheckpointError, RunInUse, TrainingError

    argv = sys.argv[1:] if argv is None else list(argv)
    debug = bool(os.environ.get("JAXGAMES_DEBUG")) or argv[:1] == ["--debug"]
    if not debug:
        _quiet_closed_loops()
    argv = argv[1:] if argv[:1] == ["--debug"] else argv
    if argv[:1] in (["--version"], ["-V"]):
        from jaxgames import __version__

        print(f"jaxgames {__version__}")
        return 0
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(
            f"jaxgames: error: unknown command {command!r}; commands: {', '.join(COMMANDS)}",
            file=sys.stderr,
        )
        return 2
    try:
        return COMMANDS[command](rest)
    except (UsageError, CheckpointError, TrainingError, RunInUse, ValueError, OSError) as e:
        if debug:
            raise
        print(f"jaxgames {command}: error: {_one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"jaxgames {command}: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        if debug:
            raise
        print(
            f"jaxgames {command}: error: out of memory (try a smaller batch or fewer games)",
            file=sys.stderr,
        )
        return 2
    except Exception as e:  # a bug: one line, the traceback on request
        if debug:
            raise
        if "RESOURCE_EXHAUSTED" in str(e):
            print(
                f"jaxgames {command}: error: the device ran out of memory: {_one_line(e)}",
                file=sys.stderr,
            )
            return 2
        print(
            f"jaxgames {command}: internal error: {type(e).__name__}: {_one_line(e)}. This is a "
            "bug in jaxgames: please report it on the project's issue tracker with the command "
            "and what JAXGAMES_DEBUG=1 prints (the traceback)",
            file=sys.stderr,
        )
        return 1


def _quiet_closed_loops() -> None:
    """Silences 'Event loop is closed' on every path Python reports an exception by (after a
    failed restore, tensorstore's reads still finishing call back into orbax's closed asyncio
    loop, many times over, after our one-line message), and Python's warnings about coroutines
    never awaited (that restore can leave one of orbax's unstarted; any other such warning is
    silenced too); other exceptions and warnings pass through."""

    def closed(value) -> bool:
        return isinstance(value, RuntimeError) and str(value) == "Event loop is closed"

    hook, thread_hook, unraisable = sys.excepthook, threading.excepthook, sys.unraisablehook

    def quiet(kind, value, traceback):
        if not closed(value):
            hook(kind, value, traceback)

    def quiet_thread(args):
        if not closed(args.exc_value):
            thread_hook(args)

    def quiet_unraisable(info):
        if not closed(info.exc_value):
            unraisable(info)

    sys.excepthook, threading.excepthook, sys.unraisablehook = quiet, quiet_thread, quiet_unraisable
    # the same failed restore can leave one of orbax's coroutines unstarted; Python warns about
    # it at exit, two more lines after ours (seen once in a clean-clone test run)
    warnings.filterwarnings(
        "ignore", message=r"coroutine '.*' was never awaited", category=RuntimeWarning
    )


def _one_line(error: BaseException) -> str:
    """An exception's message on one line (at most 500 characters)."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 500 else text[:497] + "..."


if __name__ == "__main__":
    sys.exit(main())
