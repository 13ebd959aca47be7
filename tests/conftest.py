"""Test-session setup: one persistent XLA compilation cache for all workers and subprocesses,
and cheap compilation.

Many tests compile the same programs (the same game's random-game driver, the same preset's
training step in the CLI subprocesses); with the cache each is compiled once per machine. Every
program is persisted, however quick its compilation (minimum compile time 0): the thousands of
small eager-op and helper programs are then compiled once for both workers and every CLI
subprocess instead of once per process (from a cold cache on two cores: 983 s with a 0.2 s
minimum, 804-822 s with none). The cache keys on the whole compiled program, so a change to the code
can never reuse a stale entry.
Set JAX_COMPILATION_CACHE_DIR yourself to put it elsewhere (or to an empty string: no cache).

Most tests spend their time compiling, not running: they compile with most XLA optimisations
off (`jax_disable_most_optimizations`; Othello's training step compiles in 22 s instead of 54 s
and runs 2.5x slower, which costs a short test nothing). Tests whose trainings run long
enough for full optimisation to pay (measured cold: the Nim3P and CNN trainings, 23 s against
46 s and 15 s against 22 s) are marked `optimized` and compile as users do; shorter ones
(TicTacToe and Nim TD-FARL, the Monte Carlo example, linear Q at Connect Four) are not, and
say why. JAX_DISABLE_MOST_OPTIMIZATIONS=0 turns
this off for the whole run; the CLI subprocesses inherit the setting.

XLA:CPU also emits its fused loops with its older LLVM emitters rather than its newer MLIR
fusion emitters (`--xla_cpu_use_fusion_emitters=false`, added to XLA_FLAGS, which every
subprocess inherits; the tests that force host devices add their flag to it with
`tests.helpers.xla_flags`): from a cold cache Othello's two largest conformance checks take
about 22 s instead of 27-30 s. The programs compute the same operations; users' runs keep
XLA's default.
Set XLA_FLAGS with --xla_cpu_use_fusion_emitters=true to test with the new emitters.
"""

from __future__ import annotations

import os
import pathlib

_CACHE = pathlib.Path(__file__).resolve().parents[1] / ".pytest_cache" / "jax-compilation"
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(_CACHE))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")
os.environ.setdefault("JAX_DISABLE_MOST_OPTIMIZATIONS", "1")
if "xla_cpu_use_fusion_emitters" not in os.environ.get("XLA_FLAGS", ""):
    _flags = os.environ.get("XLA_FLAGS", "") + " --xla_cpu_use_fusion_emitters=false"
    os.environ["XLA_FLAGS"] = _flags.strip()

import jax  # noqa: E402  (after the environment that configures it)
import pytest  # noqa: E402

if os.environ["JAX_COMPILATION_CACHE_DIR"]:
    jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
    jax.config.update(
        "jax_persistent_cache_min_compile_time_secs",
        float(os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"]),
    )


@pytest.fixture(autouse=True)
def _optimized_compilation(request):
    """Tests marked `optimized` (long trainings) compile with XLA's full optimisations."""
    if request.node.get_closest_marker("optimized") is None:
        yield
        return
    before = jax.config.read("jax_disable_most_optimizations")
    jax.config.update("jax_disable_most_optimizations", False)
    try:
        yield
    finally:
        jax.config.update("jax_disable_most_optimizations", before)


# The longest tests (30-60 s each on two cores) go first, so that the two workers share them
# and the run does not end with one worker alone on a long test; the rest keep their order.
_LONG_FIRST = (
    "tests/test_tutorial.py",
    "tests/test_benchmarks.py",
    "tests/test_parallel.py::test_every_learner_and_approximator",
    "tests/test_parallel.py::test_train_distributed",
    "tests/test_seeds.py::test_seeds_spread_over_four_devices",
)


def pytest_collection_modifyitems(config, items):
    rank = {prefix: i for i, prefix in enumerate(_LONG_FIRST)}

    def key(item):
        for prefix, i in rank.items():
            if item.nodeid.startswith(prefix):
                return i
        return len(rank)

    items.sort(key=key)  # stable: the order within each rank is kept
