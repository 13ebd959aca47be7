"""Train a preset: `python train/train.py configs/NAME.yaml [--section.key value ...]`.

Shows progress, evaluates every `eval.every` games, and writes to `--out` (default
runs/NAME/): the resolved config (config.json), the evaluation history (history.jsonl) and the
final parameters (params.npz).
"""

from __future__ import annotations

import json
import pathlib
import sys

import jax
import numpy as np
import tyro

from jaxgames.config import Config, load_config, to_dict
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
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(to_dict(config), indent=2))
    with (out / "history.jsonl").open("w") as log:

        def on_eval(entry: dict) -> None:
            log.write(json.dumps(entry) + "\n")
            log.flush()
            print(
                f"games {entry['train_games']:>9,}  {entry['train_seconds']:8.1f}s  "
                f"score {entry['score']:+.3f} +- {entry['ci95']:.3f}  "
                f"win {entry['win_rate']:.3f}  W/D/L {entry['wins']}/{entry['draws']}/"
                f"{entry['losses']}",
                flush=True,
            )

        result = train(config, on_eval=on_eval)
    flat = {
        "/".join(str(getattr(k, "key", k)) for k in path): np.asarray(v)
        for path, v in jax.tree_util.tree_leaves_with_path(result.params)
    }
    np.savez_compressed(out / "params.npz", **flat)
    print(
        f"trained {int(result.carry.games):,} games in {result.wall_time:.1f}s "
        f"(compile {result.compile_time:.1f}s); wrote {out}/"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
