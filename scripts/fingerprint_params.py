"""Fingerprints of the parameters that short seeded trainings of the presets reach.

    python scripts/fingerprint_params.py OUT.json [--check REFERENCE.json]

Each preset trains for a few thousand games (fixed seed, no evaluation); the fingerprint of
every parameter array is its sha256 (bit for bit), its sum and its L2 norm. `--check` compares
with an earlier file: the same sha256 means bit-identical parameters. Used to show that a
refactoring changes no result (tests/test_reference_params.py checks the sha256 where the CPU
sums as the recording one did, `summation_features`, and is skipped elsewhere).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import pathlib
import sys

import jax
import numpy as np

# (preset, games): one per learner kind and per approximator kind, and the special paths
# (three players with eligibility, chance moves, symmetries with TCL, linear features).
RUNS = [
    ("tictactoe-td-farl", 3000),
    ("tictactoe-sarsa-farl", 3000),
    ("tictactoe-q-farl", 3000),
    ("tictactoe-tabular-q", 3000),
    ("tictactoe-cnn-dqn", 600),
    ("nim3p-td-farl", 3000),
    ("nim-td-farl", 3000),
    ("connect4-linear-sarsa", 3000),
    ("connect4-td-farl", 3000),
    ("2048-td", 40),
]


def fingerprint(preset: str, games: int) -> dict:
    try:
        from jaxgames.builders import make_learner
        from jaxgames.presets import load

        config = load(preset)
    except ImportError:  # before presets were package data
        from jaxgames.cli import resolve_config_path
        from jaxgames.config import load_config
        from jaxgames.training import make_learner

        config = load_config(resolve_config_path(preset))
    config = dataclasses.replace(
        config,
        train=dataclasses.replace(config.train, games=games, average_from=None),
        eval=dataclasses.replace(config.eval, every=0),
    )
    learner = make_learner(config)
    carry = learner.init(jax.random.split(jax.random.key(config.train.seed))[0])
    while int(carry.games) < games:
        carry, _ = learner.chunk(carry)
    out = {"games": int(carry.games), "moves": int(carry.moves), "params": {}}
    for path, leaf in jax.tree_util.tree_leaves_with_path(carry.params):
        a = np.asarray(leaf)
        out["params"][jax.tree_util.keystr(path)] = {
            "sha256": hashlib.sha256(a.tobytes()).hexdigest(),
            "sum": float(a.astype(np.float64).sum()),
            "l2": float(np.sqrt((a.astype(np.float64) ** 2).sum())),
            "shape": list(a.shape),
        }
    return out


def cpu_features() -> list[str]:
    """The host CPU's vector extensions (XLA:CPU compiles for them, and their widths decide
    the order of summation, hence the last bits of a result)."""
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    flags = next(
        (line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")),
        [],
    )
    return sorted(f for f in flags if f.startswith(("avx", "sse", "fma")))


# The extensions that decide how XLA:CPU sums (its vector width, fused multiply-adds); the
# others (avx512_fp16, avx_vnni, sse4a, ...) do not touch float32 sums: the Intel CPU with
# avx512_fp16 that first recorded the reference and an AMD EPYC without it gave the same
# parameters bit for bit.
SUMMATION = ("avx", "avx2", "avx512f", "fma")


# Dense layers' products run in kernels that XLA:CPU picks by every extension: the CNN's
# parameters differ between those two CPUs, so its check needs the recording CPU's features.
EXACT_CPU = {"tictactoe-cnn-dqn"}


def summation_features(features: list[str], preset: str = "") -> list[str]:
    """Of `features` (`cpu_features()`), those that set the order of float32 summation in
    `preset`'s training (all of them for the presets in EXACT_CPU)."""
    return list(features) if preset in EXACT_CPU else [f for f in features if f in SUMMATION]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--check")
    args = parser.parse_args()
    result = {preset: fingerprint(preset, games) for preset, games in RUNS}
    result["cpu"] = cpu_features()
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    if not args.check:
        return 0
    with open(args.check) as f:
        reference = json.load(f)
    same = True
    for preset, ref in reference.items():
        if preset == "cpu":
            continue
        got = result.get(preset)
        for name, want in ref["params"].items():
            ok = got is not None and got["params"].get(name, {}).get("sha256") == want["sha256"]
            same &= ok
            print(f"{preset:24} {name:28} {'bit-identical' if ok else 'DIFFERENT'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
