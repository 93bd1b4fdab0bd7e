"""Matmuls whose rows are not 16-byte aligned (K or N off a multiple of 8 half / 4 float32 elements): the
CUDA lowering's zero padding to aligned rows around the aligned kernels (default) against the unaligned
kernels (JK_MATMUL_PAD=0: MmaStaged for 16-bit, SimtTiled for float32), against jnp.

One process on the GPU: CUPTI kernel time of the whole jitted call (pads and slice included), the lower of
two medians of 20 calls, variants and jnp alternating; XLA command buffers off. JK_MATMUL_PAD is read when
the op is traced, so each variant is a fresh jit. Each output compared with jnp's (max |ours - jnp| /
max(1, |jnp|)).

  python bench/lab/matmul_pad_lab.py [--budget S]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from norm_half_lab import lab_measure, median_ms  # noqa: E402

import jax_kernels as jk  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
measure = lab_measure()
HI = jax.lax.Precision.HIGHEST
# (label, M, K, N, dtype, op, precision)
CASES = [("bf16", 1500, 1500, 1500, jnp.bfloat16, "matmul", None),
         ("bf16 N odd", 2048, 2048, 2047, jnp.bfloat16, "matmul", None),
         ("bf16 K odd", 2048, 2047, 2048, jnp.bfloat16, "matmul", None),
         ("bf16 GPT-2 logits", 8192, 768, 50257, jnp.bfloat16, "matmul", None),
         ("bf16", 257, 1001, 264, jnp.bfloat16, "matmul", None),
         ("bf16", 64, 4096, 4095, jnp.bfloat16, "matmul", None),
         ("bf16", 16, 4096, 4095, jnp.bfloat16, "matmul", None),
         ("f16", 4096, 4095, 4096, jnp.float16, "matmul", None),
         ("bf16 +bias gelu +res", 1500, 1500, 1500, jnp.bfloat16, "linear", None),
         ("f32 HIGHEST", 1500, 1500, 1500, jnp.float32, "matmul", HI),
         ("f32 DEFAULT", 1500, 1500, 1500, jnp.float32, "matmul", None),
         ("f32 HIGHEST", 1024, 1023, 1024, jnp.float32, "matmul", HI)]


def ours_fn(op, precision):
    if op == "matmul":
        return lambda a, b, *_: jk.matmul(a, b, precision=precision)
    return lambda a, b, bias, res: jk.linear(a, b, bias, activation="gelu", residual=res, precision=precision)


def jnp_fn(op, precision):
    if op == "matmul":
        return lambda a, b, *_: jnp.matmul(a, b, precision=precision)
    return lambda a, b, bias, res: jax.nn.gelu(jnp.matmul(a, b, precision=precision) + bias, approximate=False) + res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=150.0)
    a = ap.parse_args()
    t_end = time.time() + a.budget
    print(f"device: {jax.devices()[0].device_kind}; jax {jax.__version__}")
    print("| case | M | K | N | padded us | unaligned kernels us | jnp us | jnp/padded | jnp/unaligned | err padded | err unaligned |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, m, k, n, dt, op, prec in CASES:
        if time.time() > t_end:
            print(f"| {label} {m}x{k}x{n} | budget: skipped |", flush=True)
            continue
        if not ON_GPU:
            m, k, n = max(9, m // 32), max(1, k // 32), max(1, n // 32)
        ks = jax.random.split(jax.random.key(m + k + n), 4)
        args = (jax.random.normal(ks[0], (m, k), dt), (jax.random.normal(ks[1], (k, n), dt) / np.sqrt(k)).astype(dt),
                jax.random.normal(ks[2], (n,), dt), jax.random.normal(ks[3], (m, n), dt))
        ref_f = jax.jit(jnp_fn(op, prec))
        ref = np.asarray(jax.block_until_ready(ref_f(*args)).astype(jnp.float32), np.float64)
        fns = {}
        for name, pad in (("padded", "1"), ("unaligned", "0")):
            os.environ["JK_MATMUL_PAD"] = pad
            f = jax.jit(ours_fn(op, prec))
            y = np.asarray(jax.block_until_ready(f(*args)).astype(jnp.float32), np.float64)  # traced now
            fns[name] = (f, float(np.max(np.abs(y - ref) / np.maximum(1.0, np.abs(ref)))))
        os.environ.pop("JK_MATMUL_PAD", None)
        best = {}
        order = [("padded", fns["padded"][0]), ("unaligned", fns["unaligned"][0]), ("jnp", ref_f)]
        for rnd in range(2):
            for name, f in (order if rnd == 0 else order[::-1]):
                best[name] = min(best.get(name, 1e30), median_ms(measure, f, args, 20))
        print(f"| {label} | {m} | {k} | {n} | {best['padded'] * 1e3:.1f} | {best['unaligned'] * 1e3:.1f} | "
              f"{best['jnp'] * 1e3:.1f} | {best['jnp'] / best['padded']:.2f}x | {best['jnp'] / best['unaligned']:.2f}x | "
              f"{fns['padded'][1]:.1e} | {fns['unaligned'][1]:.1e} |", flush=True)


if __name__ == "__main__":
    main()
