"""Odd-N / odd-K 16-bit matmuls: MmaStaged (the mma.sync tier reading misaligned rows through registers)
against SimtTiled (JK_MATMUL_UNALIGNED=simt, the tier these shapes had before) and jnp, in one process.

CUPTI kernel time (jax.experimental.mosaic.gpu.profiler.measure, median of the jitted function's calls:
20, or 5 for SimtTiled at GPT-2 logits size). Shapes are (M, K, N): a (M, K) @ b (K, N). Relative error =
max |out - ref| / max |ref| over up to 96 rows against float64 NumPy.
Usage: python bench/lab/matmul_oddn_lab.py [filter]
"""
from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk
from jax_kernels import reference as ref
from matmul_wgmma_lab import median_ms, reference_rows

VARIANTS = {"staged": {}, "simt": {"JK_MATMUL_UNALIGNED": "simt"}}

CASES = [  # name, dtype, (M, K, N), linear (+bias, gelu)
    ("bf16 8192x768x50257 (GPT-2 logits)", jnp.bfloat16, (8192, 768, 50257), False),
    ("bf16 8192x768x3071", jnp.bfloat16, (8192, 768, 3071), False),
    ("bf16 1000x1000x1001", jnp.bfloat16, (1000, 1000, 1001), False),
    ("bf16 4096x4096x4095", jnp.bfloat16, (4096, 4096, 4095), False),
    ("linear bf16 8192x768x3071 +bias gelu", jnp.bfloat16, (8192, 768, 3071), True),
    ("f16 8192x768x50257", jnp.float16, (8192, 768, 50257), False),
    ("bf16 4096x4095x4096 (odd K)", jnp.bfloat16, (4096, 4095, 4096), False),
    ("bf16 257x1001x1031", jnp.bfloat16, (257, 1001, 1031), False),
    ("f16 2048x1023x1025", jnp.float16, (2048, 1023, 1025), False),
]


def fn(kind, lin):
    if lin:
        if kind == "jnp":
            return jax.jit(lambda a, b, c: ref.linear(a, b, c, activation="gelu"))
        return jax.jit(lambda a, b, c: jk.linear(a, b, c, activation="gelu"))
    if kind == "jnp":
        return jax.jit(lambda a, b: jnp.matmul(a, b))
    return jax.jit(lambda a, b: jk.matmul(a, b))


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else ""
    print(f"device: {jax.devices()[0].device_kind}")
    table = []
    key = jax.random.key(0)
    for name, dtype, (m, k, n), lin in CASES:
        if flt not in name:
            continue
        ka, kb, kc, key = jax.random.split(key, 4)
        a = jax.random.normal(ka, (m, k), jnp.float32).astype(dtype)
        b = (jax.random.normal(kb, (k, n), jnp.float32) / np.sqrt(k)).astype(dtype)
        args = (a, b) + ((jax.random.normal(kc, (n,), jnp.float32).astype(dtype),) if lin else ())
        rows, r64 = reference_rows(a, b, args[2] if lin else None, lin)
        res = {}
        for kind in ("staged", "simt", "jnp"):
            env = VARIANTS.get(kind, {})
            os.environ.update(env)
            try:
                f = fn(kind, lin)
                iters = 5 if kind == "simt" and m * n * k > 2 ** 38 else 20
                out = f(*args)
                o = np.asarray(jnp.asarray(out[rows], jnp.float32), np.float64)
                err = float(np.max(np.abs(o - r64)) / np.max(np.abs(r64)))
                del out
                res[kind] = (median_ms(f, args, iters), err)
            except Exception as ex:  # one broken case must not hide the others
                print(f"{name} {kind}: FAILED {type(ex).__name__}: {str(ex)[:300]}")
                res[kind] = (float("nan"), float("nan"))
            finally:
                for v in env:
                    os.environ.pop(v, None)
        flop = 2.0 * m * n * k
        print(name, {kk: (round(v[0] * 1e3, 1), f"{v[1]:.1e}") for kk, v in res.items()}, flush=True)
        table.append((name, flop, res))
        del a, b, args
    print("\nus (CUPTI median); jnp/x > 1 means x beats jnp; staged = MmaStaged (new default), simt = SimtTiled (before)")
    print("| case | staged us | simt us | jnp us | staged TFLOP/s | jnp TFLOP/s | jnp/staged | jnp/simt | simt/staged | err staged | err simt | err jnp |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, flop, res in table:
        s, es = res["staged"]
        t, et = res["simt"]
        x, ex = res["jnp"]
        print(f"| {name} | {s * 1e3:.1f} | {t * 1e3:.1f} | {x * 1e3:.1f} | {flop / (s * 1e-3) / 1e12:.0f} | "
              f"{flop / (x * 1e-3) / 1e12:.0f} | {x / s:.2f}x | {x / t:.2f}x | {t / s:.1f}x | {es:.1e} | {et:.1e} | {ex:.1e} |")


if __name__ == "__main__":
    main()
