"""Short seeded trainings reach the parameters recorded in tests/data/reference_params.json,
bit for bit: a refactoring that changes a result fails here (scripts/fingerprint_params.py
wrote the file, and checks all ten presets: `python scripts/fingerprint_params.py OUT --check
tests/data/reference_params.json`). XLA:CPU sums in an order set by the CPU's vector width,
so on a CPU with another width (say AVX2 where the reference had AVX-512) the check is skipped
rather than failed."""

from __future__ import annotations

import json

import pytest

from tests.helpers import REPO, script_module

REFERENCE = json.loads((REPO / "tests" / "data" / "reference_params.json").read_text())
fingerprint_params = script_module("scripts/fingerprint_params.py")

# two cheap ones by default (a FARL learner, max/min Q-learning); all ten with -m slow
DEFAULT = {"tictactoe-td-farl", "tictactoe-tabular-q"}


@pytest.mark.optimized  # the reference was trained with XLA's optimisations on
@pytest.mark.parametrize(
    ("preset", "games"),
    [
        run if run[0] in DEFAULT else pytest.param(*run, marks=pytest.mark.slow)
        for run in fingerprint_params.RUNS
    ],
)
def test_a_short_training_reaches_the_recorded_parameters(preset, games):
    here = fingerprint_params.summation_features(fingerprint_params.cpu_features(), preset)
    if here != fingerprint_params.summation_features(REFERENCE["cpu"], preset):
        pytest.skip("recorded on a CPU with other vector extensions (other summation order)")
    got = fingerprint_params.fingerprint(preset, games)
    want = REFERENCE[preset]
    assert (got["games"], got["moves"]) == (want["games"], want["moves"])
    assert {k: v["sha256"] for k, v in got["params"].items()} == {
        k: v["sha256"] for k, v in want["params"].items()
    }
