"""Output error of 16-bit softmax in units in the last place (ulps of the output dtype at the float64 value),
per JK_SOFTMAX_STATS setting (re-read at every launch), against float64 NumPy and against jax.nn.softmax.

  python bench/lab/softmax_ulp.py [--rows R] [--cols N ...]

For each dtype, row length and setting: the largest and the mean |y - ref| / ulp(ref) over entries with
ref >= the dtype's smallest normal (so ulps are defined), for ours and for jax.nn.softmax on the same input.
"""
from __future__ import annotations

import argparse
import os

os.environ.setdefault("XLA_FLAGS", "--xla_gpu_enable_command_buffer=")

import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk


def ulps(y, ref, dtype):
    info = jnp.finfo(dtype)
    ok = ref >= float(info.smallest_normal)
    # ulp of a normal value v in a p-bit significand: 2^(floor(log2 v) - (p - 1))
    p = int(info.nmant) + 1
    u = np.exp2(np.floor(np.log2(np.where(ok, ref, 1.0))) - (p - 1))
    e = np.abs(y - ref) / u
    return float(e[ok].max()), float(e[ok].mean())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--cols", type=int, nargs="+", default=[32768, 65536])
    a = ap.parse_args()
    for dtype in (jnp.bfloat16, jnp.float16):
        for n in a.cols:
            x = jax.random.normal(jax.random.key(n), (a.rows, n), dtype) * 3
            x64 = np.asarray(x.astype(jnp.float32), np.float64)
            m = x64.max(-1, keepdims=True)
            ref = np.exp(x64 - m) / np.exp(x64 - m).sum(-1, keepdims=True)
            yj = np.asarray(jax.nn.softmax(x, axis=-1).astype(jnp.float32), np.float64)
            mj, aj = ulps(yj, ref, dtype)
            for stats in ("default", "two", "pair", "keep"):
                if stats == "default":
                    os.environ.pop("JK_SOFTMAX_STATS", None)
                else:
                    os.environ["JK_SOFTMAX_STATS"] = stats
                y = np.asarray(jax.jit(jk.softmax)(x).astype(jnp.float32), np.float64)
                mo, ao = ulps(y, ref, dtype)
                print(f"{jnp.dtype(dtype).name:8s} {a.rows}x{n:<6d} {stats:7s} ours max {mo:5.2f} mean {ao:5.3f} ulp"
                      f" | jax.nn max {mj:5.2f} mean {aj:5.3f}", flush=True)
            os.environ.pop("JK_SOFTMAX_STATS", None)


if __name__ == "__main__":
    main()
