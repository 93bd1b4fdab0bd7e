"""float32 matmul lab (issue #6): the Hopper TF32 tier (WgmmaTf32) and its variants against the mma.sync TF32
tier and jnp at precision DEFAULT (and HIGH, HIGHEST as they are), in one process.

CUPTI kernel time (jax.experimental.mosaic.gpu.profiler.measure), median of 20 calls (5 at 8192^3) of the
jitted function, random normal inputs, variants alternating with jnp. Variants are environment knobs the
launcher reads at every launch (each variant its own jitted function): "ours" the default dispatch,
"mma" JK_MATMUL_TF32=mma (the mma.sync TF32 tier), "wg_trunc"/"wg_round" the wgmma tier with a's tiles
truncated by the tensor cores / rounded in shared memory (JK_MATMUL_TF32_ROUND=0|1), "wg128"/"wg256" the
wgmma tier with 128- or 256-row tiles forced (JK_MATMUL_TF32_BM). Errors against float64 NumPy over 96 sampled rows: max
|out - ref| / max |ref| and the Frobenius ratio ||out - ref|| / ||ref||.
Usage: XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/matmul_tf32_lab.py [filter]
"""
from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk

HI, DF, HG = jax.lax.Precision.HIGHEST, jax.lax.Precision.DEFAULT, jax.lax.Precision.HIGH

VARIANTS = {
    "ours": {},
    "mma": {"JK_MATMUL_TF32": "mma"},
    "wg_trunc": {"JK_MATMUL_TF32": "wgmma", "JK_MATMUL_TF32_ROUND": "0"},
    "wg_round": {"JK_MATMUL_TF32": "wgmma", "JK_MATMUL_TF32_ROUND": "1"},
    "wg128": {"JK_MATMUL_TF32": "wgmma", "JK_MATMUL_TF32_BM": "128"},
    "wg256": {"JK_MATMUL_TF32": "wgmma", "JK_MATMUL_TF32_BM": "256"},
}
R = ("wg_trunc", "wg_round")
CASES = [  # name, (M, N, K), precision, variants besides ours/xla; most telling first
    ("f32 DEFAULT 4096^3", (4096, 4096, 4096), DF, ("mma",) + R),
    ("f32 DEFAULT 2048^3", (2048, 2048, 2048), DF, R + ("wg128",)),
    ("f32 DEFAULT 1000^3", (1000, 1000, 1000), DF, R + ("wg128", "wg256")),
    ("f32 DEFAULT 1001x1000x1003 (fallback)", (1001, 1000, 1003), DF, ()),
    ("f32 DEFAULT 8192^3", (8192, 8192, 8192), DF, R),
    ("f32 DEFAULT 768^3", (768, 768, 768), DF, ("mma", "wg128", "wg256")),
    ("f32 DEFAULT 512^3", (512, 512, 512), DF, ("mma", "wg128", "wg256")),
    ("f32 DEFAULT 384x1024x256", (384, 1024, 256), DF, ("mma", "wg128")),
    ("f32 DEFAULT 2048x2048x512", (2048, 2048, 512), DF, ("wg_trunc", "wg128")),
    ("f32 DEFAULT 8x(1024x1024x1024)", (8, 1024, 1024, 1024), DF, ("wg_trunc",)),
    ("f32 DEFAULT 16384x1024x4096", (16384, 1024, 4096), DF, ("wg_trunc",)),
    ("f32 HIGH 4096^3", (4096, 4096, 4096), HG, ()),
    # linear (bias + exact gelu + residual) at DEFAULT: the wgmma tier's epilogue against the mma.sync tier's
    # and jnp's composition (session 6 measured the first per-element form against the lean one that
    # replaced it: matmul_tf32_linear_h200.txt).
    ("f32 DEFAULT linear gelu+res 4096^3", (4096, 4096, 4096), DF, ("mma",)),
    ("f32 DEFAULT linear gelu+res 2048^3", (2048, 2048, 2048), DF, ("mma",)),
    ("f32 HIGHEST 4096^3", (4096, 4096, 4096), HI, ()),
]


def median_ms(f, args, iterations):
    from jax.experimental.mosaic.gpu.profiler import measure
    jax.block_until_ready(f(*args))
    _, ts = measure(f, iterations=iterations)(*args)
    return float(np.median(np.asarray(ts)))


def sample_rows(m):
    return np.unique(np.concatenate([np.arange(min(32, m)), np.arange(m // 2, min(m // 2 + 32, m)),
                                     np.arange(max(0, m - 32), m)]))


def errors(out, a64, b64, rows, r):
    o = np.asarray(out, np.float64)
    o = o[:, rows] if o.ndim == 3 else o[rows]
    d = o - r
    return float(np.max(np.abs(d)) / np.max(np.abs(r))), float(np.linalg.norm(d) / np.linalg.norm(r))


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else ""
    print(f"device: {jax.devices()[0].device_kind}", flush=True)
    table = []
    key = jax.random.key(0)
    for name, shape, prec, extra in CASES:
        if flt not in name:
            continue
        batch = shape[:-3]
        m, n, k = shape[-3:]
        ka, kb, key = jax.random.split(key, 3)
        a = jax.random.normal(ka, batch + (m, k), jnp.float32)
        b = jax.random.normal(kb, batch + (k, n), jnp.float32)
        rows = sample_rows(m)
        a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
        r64 = np.matmul(a64[..., rows, :], b64)
        lin = "linear" in name
        if lin:  # act(a @ b + bias) + res
            kc, kr, key = jax.random.split(key, 3)
            bias = jax.random.normal(kc, (n,), jnp.float32)
            res_in = jax.random.normal(kr, batch + (m, n), jnp.float32)
            z = r64 + np.asarray(bias, np.float64)
            from math import erf
            r64 = 0.5 * z * (1 + np.vectorize(erf)(z / np.sqrt(2))) + np.asarray(res_in, np.float64)[..., rows, :]
        iters = 5 if m * n * k >= 8192 ** 3 else 20
        res = {}
        kinds = ("ours",) + extra + ("xla",)
        for rep in range(2):  # alternate ours/jnp order: a second pass with the order reversed
            for kind in (kinds if rep == 0 else kinds[::-1]):
                env = VARIANTS.get(kind, {})
                os.environ.update(env)
                try:
                    if lin and kind == "xla":
                        f = jax.jit(lambda a, b, p=prec: jax.nn.gelu(jnp.matmul(a, b, precision=p) + bias,
                                                                  approximate=False) + res_in)
                    elif lin:
                        f = jax.jit(lambda a, b, p=prec: jk.linear(a, b, bias, activation="gelu", residual=res_in,
                                                                   precision=p))
                    elif kind == "xla":
                        f = jax.jit(lambda a, b, p=prec: jnp.matmul(a, b, precision=p))
                    else:
                        f = jax.jit(lambda a, b, p=prec: jk.matmul(a, b, precision=p))
                    t = median_ms(f, (a, b), iters)
                    e = errors(f(a, b), a64, b64, rows, r64) if rep == 0 else res[kind][1]
                    t = min(t, res[kind][0]) if rep == 1 else t
                    res[kind] = (t, e)
                except Exception as ex:  # one broken variant must not hide the others
                    print(f"{name} {kind}: FAILED {type(ex).__name__}: {str(ex)[:300]}", flush=True)
                    res[kind] = (float("nan"), (float("nan"), float("nan")))
                finally:
                    for v in env:
                        os.environ.pop(v, None)
        flop = 2.0 * m * n * k * int(np.prod(batch, dtype=np.int64))
        print(name, {kk: (round(v[0] * 1e3, 1), f"{v[1][0]:.1e}", f"{v[1][1]:.1e}") for kk, v in res.items()},
              flush=True)
        table.append((name, flop, res))
        del a, b, a64, b64
    print("\nus = min over 2 passes of the median CUPTI time; jnp/x > 1: x beats jnp; err = max|d|/max|ref|, "
          "fro = ||d||/||ref|| vs float64")
    print("| case | variant | us | TFLOP/s | jnp us | jnp TFLOP/s | jnp/x | err | fro | jnp err | jnp fro |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, flop, res in table:
        x, ex = res["xla"]
        for kind, (t, e) in res.items():
            if kind == "xla":
                continue
            print(f"| {name} | {kind} | {t * 1e3:.1f} | {flop / (t * 1e-3) / 1e12:.0f} | {x * 1e3:.1f} "
                  f"| {flop / (x * 1e-3) / 1e12:.0f} | {x / t:.2f}x | {e[0]:.1e} | {e[1]:.1e} | {ex[0]:.1e} "
                  f"| {ex[1]:.1e} |")


if __name__ == "__main__":
    main()
