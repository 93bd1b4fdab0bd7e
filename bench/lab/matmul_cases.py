"""Issue 6's matmul/linear cases: jax_kernels against the jnp equivalent with the same precision.

CUPTI kernel times (jax.experimental.mosaic.gpu.profiler.measure, median of N calls of the jitted
function), random normal inputs, both sides in one process. Relative error = max |out - ref| / max |ref|
on a sample of 64 rows against a float64 NumPy reference. Usage: python bench/lab/matmul_cases.py [filter]
"""
from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import jax_kernels as jk
from jax_kernels import reference as ref

HI = lax.Precision.HIGHEST

# name, dtype, (M, N, K), precision, linear epilogue (None: plain matmul)
CASES = [
    ("bf16 4096^3", jnp.bfloat16, (4096, 4096, 4096), None, None),
    ("bf16 8192^3", jnp.bfloat16, (8192, 8192, 8192), None, None),
    ("f16 4096^3", jnp.float16, (4096, 4096, 4096), None, None),
    ("f16 8192^3", jnp.float16, (8192, 8192, 8192), None, None),
    ("bf16 16384x1024x4096", jnp.bfloat16, (16384, 1024, 4096), None, None),
    ("bf16 1000^3", jnp.bfloat16, (1000, 1000, 1000), None, None),
    ("bf16 8x4096x4096", jnp.bfloat16, (8, 4096, 4096), None, None),
    ("f32 HIGHEST 4096^3", jnp.float32, (4096, 4096, 4096), HI, None),
    ("f32 HIGHEST 512x512x256", jnp.float32, (512, 512, 256), HI, None),
    ("f32 DEFAULT 4096^3", jnp.float32, (4096, 4096, 4096), None, None),
    ("linear bf16 4096^3 bias+gelu", jnp.bfloat16, (4096, 4096, 4096), None, "gelu"),
    ("linear bf16 4096^3 bias+gelu+res", jnp.bfloat16, (4096, 4096, 4096), None, "gelu+res"),
]


def median_ms(f, *args, iterations=20):
    from jax.experimental.mosaic.gpu.profiler import measure
    _, ts = measure(jax.jit(f), iterations=iterations)(*args)
    return float(np.median(np.asarray(ts)))


def rel_err(out, a64, b64, bias64=None, act=None, res64=None, rows=64):
    o = np.asarray(jnp.asarray(out[:rows], jnp.float32), np.float64)
    r = a64[:rows] @ b64
    if bias64 is not None:
        r = r + bias64
        if act == "gelu":
            from scipy.special import erf  # noqa: PLC0415
            r = 0.5 * r * (1 + erf(r / np.sqrt(2)))
    if res64 is not None:
        r = r + res64[:rows]
    return float(np.max(np.abs(o - r)) / np.max(np.abs(r)))


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else ""
    print(f"device: {jax.devices()[0].device_kind}")
    rows = []
    key = jax.random.key(0)
    for name, dtype, (m, n, k), prec, lin in CASES:
        if flt not in name:
            continue
        ka, kb, kc, kd, key = jax.random.split(key, 5)
        a = jax.random.normal(ka, (m, k), jnp.float32).astype(dtype)
        b = (jax.random.normal(kb, (k, n), jnp.float32) / (np.sqrt(k) if lin else 1.0)).astype(dtype)
        a64 = np.asarray(a[:64].astype(jnp.float32), np.float64)
        b64 = np.asarray(b.astype(jnp.float32), np.float64)
        if lin is None:
            ours = lambda a, b, prec=prec: jk.matmul(a, b, precision=prec)
            theirs = lambda a, b, prec=prec: jnp.matmul(a, b, precision=prec)
            args = (a, b)
            extra = {}
        else:
            bias = jax.random.normal(kc, (n,), jnp.float32).astype(dtype)
            res = jax.random.normal(kd, (m, n), jnp.float32).astype(dtype) if "res" in lin else None
            ours = lambda a, b, c, r=res: jk.linear(a, b, c, activation="gelu", residual=r)
            theirs = lambda a, b, c, r=res: ref.linear(a, b, c, activation="gelu", residual=r)
            args = (a, b, bias)
            extra = dict(bias64=np.asarray(bias.astype(jnp.float32), np.float64), act="gelu",
                         res64=None if res is None else np.asarray(res[:64].astype(jnp.float32), np.float64))
        iters = 5 if m * n * k >= 8192 ** 3 or prec == HI and m * n * k >= 4096 ** 3 else 20
        try:
            t_ours = median_ms(ours, *args, iterations=iters)
            t_xla = median_ms(theirs, *args, iterations=iters)
            e_ours = rel_err(jax.jit(ours)(*args), a64, b64, **extra)
            e_xla = rel_err(jax.jit(theirs)(*args), a64, b64, **extra)
        except Exception as e:  # keep going: one broken case must not hide the others
            print(f"{name}: FAILED {type(e).__name__}: {str(e)[:300]}")
            continue
        tf = 2.0 * m * n * k / 1e12
        row = (name, t_ours * 1e3, tf / (t_ours * 1e-3), t_xla * 1e3, tf / (t_xla * 1e-3), t_xla / t_ours,
               e_ours, e_xla)
        rows.append(row)
        print("  ".join(str(x) for x in row), flush=True)
    print()
    print(f"| case | jk us | jk TFLOP/s | XLA us | XLA TFLOP/s | ratio (XLA/jk time) | jk rel err | XLA rel err |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]:.1f} | {r[2]:.1f} | {r[3]:.1f} | {r[4]:.1f} | {r[5]:.2f} | {r[6]:.1e} | {r[7]:.1e} |")


if __name__ == "__main__":
    main()
