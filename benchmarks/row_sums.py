"""How fast XLA sums the rows of the n-tuple update's shape, written several ways.

    python benchmarks/row_sums.py [--rows 352] [--width 140] [--seconds 2]

The pattern of the Connect Four TD-FARL update at B = 256 (352 update rows of 140
tuple-symmetry reads): a gather of rows x width TCL accumulator pairs from a table of 600k,
their exponential step factor, times each read's count, summed per row; 200 such steps in one
`lax.scan`, microseconds per step. XLA:CPU hands a plain `jnp.sum` of this shape to the
YNNPACK library ("YNNPACK fusions" counts them in the compiled program); run it once more with
`XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type=` to see the sums without YNNPACK.
`jaxgames.approximators.ntuple.sum_last` is the product with ones.
"""

from __future__ import annotations

import argparse
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

STEPS = 200
TABLE = 600_000


def _ways(width: int) -> dict:
    def plain(x):
        return jnp.sum(x, axis=-1)

    def einsum(x):  # XLA rewrites it into the same reduce
        return jnp.einsum("mt,t->m", x, jnp.ones(width, x.dtype))

    def prefix(x):
        return jnp.cumsum(x, axis=-1)[:, -1]

    def product(x):
        return jnp.matmul(x, jnp.ones(width, x.dtype), precision="highest")

    return {
        "jnp.sum(x, axis=-1)": plain,
        "jnp.einsum with ones": einsum,
        "jnp.cumsum(x)[:, -1]": prefix,
        "x @ ones (sum_last)": product,
    }


def _program(row_sum, rows: int):
    def body(carry, _):
        idx, reads, total = carry
        acc = table.at[idx].get(mode="promise_in_bounds")
        rate = 3.7 * jnp.exp(2.7 * (jnp.abs(acc[:, 0]) / acc[:, 1] - 1.0))
        s = row_sum(reads * rate.reshape(rows, -1))
        idx = (idx + 7919 + (s[0] > 1e30).astype(jnp.int32)) % TABLE
        return (idx, reads, total + s), None

    @jax.jit
    def run(idx, reads):
        carry, _ = jax.lax.scan(body, (idx, reads, jnp.zeros(rows)), None, length=STEPS)
        return carry[2]

    rng = np.random.default_rng(0)
    table = jnp.asarray(rng.random((TABLE, 2), np.float32) + 0.5)
    return run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=sys.argv[0], description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=352)
    parser.add_argument("--width", type=int, default=140)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(1)
    idx = jnp.asarray(rng.integers(0, TABLE, args.rows * args.width), jnp.int32)
    reads = jnp.asarray(rng.integers(0, 3, (args.rows, args.width)).astype(np.float32))
    print(
        f"row sums of {args.rows} x {args.width}, jax {jax.__version__} on {jax.default_backend()}"
    )
    print(f"{'written as':<24}{'YNNPACK fusions':>16}{'us per step':>13}")
    for name, row_sum in _ways(args.width).items():
        run = _program(row_sum, args.rows)
        fusions = run.lower(idx, reads).compile().as_text().count("__ynn_fusion")
        run(idx, reads).block_until_ready()
        start, calls = time.perf_counter(), 0
        while time.perf_counter() - start < args.seconds:
            run(idx, reads).block_until_ready()
            calls += 1
        us = (time.perf_counter() - start) / calls / STEPS * 1e6
        print(f"{name:<24}{fusions:>16}{us:>13.1f}", flush=True)


if __name__ == "__main__":
    main()
