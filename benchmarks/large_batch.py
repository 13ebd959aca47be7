"""Strength per training game against the lockstep batch size, Connect Four TD-FARL.

    python benchmarks/large_batch.py --batch-sizes 256 4096 --sub-batches 0 256 \
        --games 1000000 --milestones 250000 500000 1000000 --seeds 0 1 --ab-games 200

Every (B, sub_batch, seed) trains the preset (`--preset`, default `connect4-td-farl`) for
`--games` games with epsilon kept on the preset's own course (so a short run explores as the
first part of the full run does). At every milestone (finished training games) it prints the
agent's (final weights) sign accuracy on the won and lost positions of the UCI 8-ply set
(67,557 positions, 2 s: a smooth, cheap measure of the value function), and with
`--ab-games N` the points (a draw worth half, as GBG reports) of N games against the perfect
player (AB), the agent moving first, at the milestones of `--ab-at` (default: the last).
`sub_batch` 0 is one update per lockstep step; S > 0 applies the step's updates in B / S
groups (`algorithm.sub_batch`). With `--average-from G` the run also keeps the running mean
of the weights from game G on (`train.average_from`, sampled about 100 times up to `--games`;
training itself is unchanged) and measures that mean beside the final weights at every
milestone past G. `--alpha-scale F` multiplies the preset's step size. `--move-batch M`
plays the B games as B / M lockstep batches of M that move and learn in turn
(`lockstep.interleave`), each choosing its moves from the weights the batch before it left
and updating in its M / S groups of S: the same number of updates of S games per step, but no
move chosen from weights more than M / S updates old (without it, up to B / S); a probe of
what stale moves cost, at the speed of B = M. `--fresh-moves` is M = S. `--fresh-targets`
reads each group's targets from the newest weights, the moves still chosen at the step's start
(`algorithm.fresh_targets`; the runs with sub-batches).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

import jax

from jaxgames import analysis, evaluation, presets, runlog
from jaxgames.builders import chunk_steps, make_learner
from jaxgames.config import Config
from jaxgames.datasets import load_uci_connect4
from jaxgames.learning import lockstep
from jaxgames.opponents import make_opponent


def run_config(
    preset: Config,
    batch: int,
    sub_batch: int,
    seed: int,
    games: int,
    opening_moves: int | None = None,
    average_from: int | None = None,
    alpha_scale: float = 1.0,
) -> Config:
    """The preset at batch size B, one seed, `games` games, epsilon on the preset's course;
    `opening_moves`, where given, replaces the preset's `algorithm.random_opening_moves`;
    the weight mean from `average_from` games on (None: no mean, the preset's is dropped);
    the step size's schedule (start and end) times `alpha_scale`."""
    if not alpha_scale > 0:
        raise ValueError(f"alpha_scale {alpha_scale}: expected a number > 0")
    algo = preset.algorithm
    alpha = dataclasses.replace(
        algo.alpha, start=algo.alpha.start * alpha_scale, end=algo.alpha.end * alpha_scale
    )
    epsilon = algo.epsilon
    if epsilon.games == 0:
        epsilon = dataclasses.replace(epsilon, games=preset.train.games)
    if opening_moves is None:
        opening_moves = algo.random_opening_moves
    algo = dataclasses.replace(
        algo,
        alpha=alpha,
        epsilon=epsilon,
        sub_batch=sub_batch,
        random_opening_moves=opening_moves,
    )
    train = dataclasses.replace(
        preset.train, games=games, batch_size=batch, seed=seed, average_from=average_from
    )
    return dataclasses.replace(preset, algorithm=algo, train=train)


def interleaved_chunk(learner, config: Config, move_batch: int):
    """The training chunk with the B games as B / M interleaved lockstep batches of M =
    `move_batch` (`lockstep.interleave`), each with the update groups of S =
    `algorithm.sub_batch` (one update where S is 0 or >= M): each batch's moves from the
    weights the batch before it left."""
    sub, b = config.algorithm.sub_batch, config.train.batch_size
    if not 0 < move_batch < b or b % move_batch:
        raise ValueError(f"move batch {move_batch}: expected a divisor of B = {b} below it")
    if 0 < sub < move_batch and move_batch % sub:
        raise ValueError(f"sub-batch {sub} does not divide the move batch {move_batch}")
    inner = dataclasses.replace(learner.settings, sub_batch=sub if sub < move_batch else 0)
    step = learner.definition.make_step(learner.game, learner.model, inner, move_batch)
    step = lockstep.interleave(step, b // move_batch, learner.definition.per_game)
    return lockstep.jit_chunk(step, chunk_steps(config))


def one_run(
    config: Config,
    milestones: list[int],
    ab_games: int,
    ab_at: set,
    uci,
    move_batch: int = 0,
) -> list:
    """Trains one run (`move_batch` > 0: see `interleaved_chunk`); returns a row per
    milestone: (games, train s, UCI accuracy, AB points, the weight mean's UCI accuracy, its
    AB points), the mean's NaN where there is none yet."""
    learner = make_learner(config, with_chunk=not move_batch)
    carry = learner.init(jax.random.key(config.train.seed))
    train_chunk = learner.chunk
    if move_batch:
        train_chunk = interleaved_chunk(learner, config, move_batch)
    chunk = train_chunk.lower(carry).compile()
    boards, outcomes = uci
    values = jax.jit(learner.position_values)
    perfect = make_opponent("perfect", learner.game) if ab_games else None
    t = config.train
    period = runlog.average_period(config) if t.average_from is not None else 0
    average, count = None, 0

    def measure(params, ab: bool) -> tuple[float, float]:
        acc = analysis.uci_connect4_accuracy(
            lambda s: values(params, s), boards, outcomes, learner.game
        )["decisive_accuracy"]
        points = float("nan")
        if perfect is not None and ab:
            result = evaluation.arena(
                learner.game,
                learner.policy(params),
                perfect,
                ab_games,
                jax.random.key(0),
                seats="first",
            ).to_dict()
            points = (result["wins"] + 0.5 * result["draws"]) / result["games"]
        return acc, points

    rows, seconds = [], 0.0
    for target in milestones:
        start = time.perf_counter()
        while int(carry.games) < target:
            before = int(carry.games)
            carry, _ = chunk(carry)
            if period and runlog.crossed(before, int(carry.games), period, t.average_from):
                count += 1
                average = runlog.accumulate(average, carry.params, count)
        jax.block_until_ready(carry.params)
        seconds += time.perf_counter() - start
        acc, points = measure(carry.params, target in ab_at)
        mean_acc, mean_points = float("nan"), float("nan")
        if count == 1:  # one sample: the mean is the final weights, bit for bit
            mean_acc, mean_points = acc, points
        elif average is not None:
            mean_acc, mean_points = measure(average, target in ab_at)
        rows.append((int(carry.games), seconds, acc, points, mean_acc, mean_points))
        mean = f", mean ({count} samples) UCI {mean_acc:.3f}, AB {mean_points:.3f}" if count else ""
        moves = f" moves {move_batch}" if move_batch else ""
        moves += " fresh targets" if config.algorithm.fresh_targets else ""
        print(
            f"  B {t.batch_size} sub {config.algorithm.sub_batch}{moves} "
            f"openings {config.algorithm.random_opening_moves} "
            f"alpha {config.algorithm.alpha.start:g} seed {t.seed}: "
            f"{int(carry.games):,} games, {seconds:.0f} s, UCI {acc:.3f}, AB {points:.3f}{mean}",
            flush=True,
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=sys.argv[0], description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="connect4-td-farl")
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[256, 4096])
    parser.add_argument("--sub-batches", nargs="+", type=int, default=[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--milestones", nargs="*", type=int, default=[])
    parser.add_argument("--ab-games", type=int, default=0)
    parser.add_argument("--ab-at", nargs="*", type=int, default=[])
    parser.add_argument(
        "--opening-moves",
        type=int,
        default=None,
        help="the first K moves of every training game random (default: the preset's)",
    )
    parser.add_argument(
        "--average-from",
        type=int,
        default=None,
        help="also measure the mean of the weights from game G on (default: no mean)",
    )
    parser.add_argument(
        "--alpha-scale",
        type=float,
        default=1.0,
        help="the preset's step size (schedule start and end) times F (default: 1)",
    )
    parser.add_argument(
        "--move-batch",
        type=int,
        default=0,
        help="B / M interleaved batches of M, each moving from the newest weights (0: off)",
    )
    parser.add_argument("--fresh-moves", action="store_true", help="--move-batch S")
    parser.add_argument(
        "--fresh-targets",
        action="store_true",
        help="each update group's targets from the newest weights (algorithm.fresh_targets;"
        " runs with sub-batches only)",
    )
    args = parser.parse_args(argv)
    preset = presets.load(args.preset)
    milestones = sorted(set(args.milestones) | {args.games})
    uci = load_uci_connect4()
    print(f"{args.preset}, jax {jax.__version__} on {jax.devices()[0].device_kind}", flush=True)
    table = []
    for b in args.batch_sizes:
        for sub in args.sub_batches:
            if sub >= b:
                continue
            for seed in args.seeds:
                config = run_config(
                    preset,
                    b,
                    sub,
                    seed,
                    args.games,
                    args.opening_moves,
                    args.average_from,
                    args.alpha_scale,
                )
                if args.fresh_targets and sub:
                    algo = dataclasses.replace(config.algorithm, fresh_targets=True)
                    config = dataclasses.replace(config, algorithm=algo)
                ab_at = set(args.ab_at) or {args.games}
                move_batch = sub if args.fresh_moves else args.move_batch
                if move_batch >= b:
                    move_batch = 0
                for row in one_run(config, milestones, args.ab_games, ab_at, uci, move_batch):
                    table.append((b, sub, seed, *row))
    head = f"{'B':>6}{'sub':>6}{'seed':>6}{'games':>11}{'train s':>9}{'UCI acc':>9}{'AB pts':>8}"
    if args.average_from is not None:
        head += f"{'mean UCI':>10}{'mean AB':>9}"
    print(head)
    for b, sub, seed, games, secs, acc, points, mean_acc, mean_points in table:
        line = f"{b:>6}{sub:>6}{seed:>6}{games:>11,}{secs:>9.0f}{acc:>9.3f}{points:>8.3f}"
        if args.average_from is not None:
            line += f"{mean_acc:>10.3f}{mean_points:>9.3f}"
        print(line)


if __name__ == "__main__":
    main()
