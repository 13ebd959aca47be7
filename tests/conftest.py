"""Test-session setup: one persistent XLA compilation cache for all workers and subprocesses.

Many tests compile the same programs (the same game's random-game driver, the same preset's
training step in the CLI subprocesses); with the cache each is compiled once per machine. The
cache keys on the whole compiled program, so a change to the code can never reuse a stale entry.
Set JAX_COMPILATION_CACHE_DIR yourself to put it elsewhere (or to an empty string: no cache).
"""

from __future__ import annotations

import os
import pathlib

_CACHE = pathlib.Path(__file__).resolve().parents[1] / ".pytest_cache" / "jax-compilation"
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(_CACHE))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.2")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")

import jax  # noqa: E402  (after the environment that configures it)

if os.environ["JAX_COMPILATION_CACHE_DIR"]:
    jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
    jax.config.update(
        "jax_persistent_cache_min_compile_time_secs",
        float(os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"]),
    )
