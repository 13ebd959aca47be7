"""Train a preset: `python train/train.py configs/NAME.yaml [--out DIR] [--section.key value ...]`.

A thin wrapper over `jaxgames.training.train` (the same as `jaxgames train`): shows progress,
evaluates every `eval.every` games and writes the run folder (config, metrics, checkpoints,
learning curve) to `--out` (default runs/NAME).
"""

from __future__ import annotations

import pathlib
import sys

import tyro

from jaxgames.config import Config, load_config
from jaxgames.training import train


def main(argv: list[str]) -> None:
    if not argv or argv[0].startswith("-"):
        sys.exit("usage: train.py CONFIG.yaml [--out DIR] [--section.key value ...]")
    path = pathlib.Path(argv[0])
    rest = argv[1:]
    out = pathlib.Path("runs") / path.stem
    if "--out" in rest:
        i = rest.index("--out")
        out, rest = pathlib.Path(rest[i + 1]), rest[:i] + rest[i + 2 :]
    config = tyro.cli(Config, default=load_config(path), args=rest, prog=f"train.py {path}")

    def on_eval(entry: dict) -> None:
        print(
            f"games {entry['train_games']:>9,}  {entry['train_seconds']:8.1f}s  "
            f"score {entry['score']:+.3f} +- {entry['ci95']:.3f}  win {entry['win_rate']:.3f}  "
            f"W/D/L {entry['wins']}/{entry['draws']}/{entry['losses']}",
            flush=True,
        )

    result = train(config, run_dir=out, on_eval=on_eval)
    print(
        f"trained {int(result.carry.games):,} games in {result.wall_time:.1f}s "
        f"(compile {result.compile_time:.1f}s); wrote {out}/"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
