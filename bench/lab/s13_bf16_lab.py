"""Session 13: why bfloat16 softmax runs slower than float16 on the same kernels (issue #4's last misses).

The bfloat16 and float16 instantiations of the short-row kernel have the same SASS up to the conversions (384 against
376 instructions), yet in results.md bf16 is 8% slower at 49152 x 128 (5.8 against 5.3-5.4 us) and 2.6% slower at
24576 x 65536. jnp shows a gap too. This lab separates the data from the code: every kernel runs on its own dtype's
random normal data and on the other dtype's bits (bitcast: the same bytes, the other kernel), and on zeros-free
constant-exponent data. If the time follows the bits, not the kernel, the gap is the data's (DRAM / L2 power or
compression), not our code's.

One process, XLA command buffers off, CUPTI kernel time (profiler.measure), lower of two medians of 20 calls.

  python bench/lab/s13_bf16_lab.py [--cols 128,65536]
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from norm_half_lab import lab_measure, median_ms  # noqa: E402

import jax_kernels as jk  # noqa: E402


def datasets(rows, cols):
    """(name, array) pairs, made one at a time (all six at once did not fit an 80 GB card at 24576 x 65536): each
    dtype's random normal data, the other's bits, and uniform [1, 2) data (one exponent, random mantissa)."""
    key = jax.random.key(cols)
    bf = jax.random.normal(key, (rows, cols), jnp.bfloat16)
    hf = jax.random.normal(key, (rows, cols), jnp.float16)
    yield "bf16 normal", bf
    yield "f16 normal", hf
    yield "bf16 <- f16 bits", jax.lax.bitcast_convert_type(hf, jnp.bfloat16)
    yield "f16 <- bf16 bits", jax.lax.bitcast_convert_type(bf, jnp.float16)
    yield "bf16 uniform[1,2)", jax.random.uniform(key, (rows, cols), jnp.bfloat16, 1.0, 2.0)
    yield "f16 uniform[1,2)", jax.random.uniform(key, (rows, cols), jnp.float16, 1.0, 2.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cols", default="128,65536")
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()
    measure = lab_measure()
    print(f"device: {jax.devices()[0].device_kind}; jax {jax.__version__}")
    fns = {"softmax": (jk.softmax, jax.nn.softmax), "log_softmax": (jk.log_softmax, jax.nn.log_softmax)}
    print("| op | cols | data | ours us | jnp us | jnp/ours | finite out |")
    print("|---|---:|---|---:|---:|---:|---|")
    for cols in map(int, a.cols.split(",")):
        rows = 24576 if cols >= 65536 else 49152
        for op, (ours, ref) in fns.items():
            fo, fr = jax.jit(ours), jax.jit(ref)
            for name, x in datasets(rows, cols):
                y = fo(x)
                finite = bool(jnp.isfinite(y.astype(jnp.float32)).all()) if op == "softmax" else "-"
                del y
                to, tr = [], []
                for _ in range(2):
                    to.append(median_ms(measure, fo, (x,), a.iters))
                    tr.append(median_ms(measure, fr, (x,), a.iters))
                o, r = min(to) * 1e3, min(tr) * 1e3
                print(f"| {op} | {cols} | {name} | {o:.2f} | {r:.2f} | {r / o:.3f} | {finite} |", flush=True)


if __name__ == "__main__":
    main()
