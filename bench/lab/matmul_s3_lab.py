"""Session-3 matmul lab: decode (SkinnyStream vs SkinnyMma), the fused epilogue's prefetches, the wgmma
split-K, against jnp in one process.

CUPTI kernel time (jax.experimental.mosaic.gpu.profiler.measure, median of 20 calls of the jitted function),
random normal inputs (the benchmark's: x and w scaled as in jax_kernels/_bench). Each variant is its own
jitted function, run with its environment variables set (the launchers read them at every launch).
Relative error = max |out - ref| / max |ref| over up to 96 rows against float64 NumPy.
Usage: python bench/lab/matmul_s3_lab.py [filter]
"""
from __future__ import annotations

import os
import sys
from math import erf as _erf

import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk
from jax_kernels import reference as ref
from matmul_wgmma_lab import median_ms, sample_rows

HI = jax.lax.Precision.HIGHEST

# variant name -> environment
VARIANTS = {
    "ours": {},
    "mma": {"JK_MATMUL_SKINNY": "mma"},                       # SkinnyMma (before)
    "stream": {"JK_MATMUL_SKINNY": "stream"},                 # SkinnyStream, launcher's cluster
    "st_c2": {"JK_MATMUL_SKINNY": "stream", "JK_MATMUL_SKINNY_CLUSTER": "2"},
    "st_c4": {"JK_MATMUL_SKINNY": "stream", "JK_MATMUL_SKINNY_CLUSTER": "4"},
    "st_c8": {"JK_MATMUL_SKINNY": "stream", "JK_MATMUL_SKINNY_CLUSTER": "8"},
    "st_s4": {"JK_MATMUL_SKINNY": "stream", "JK_MATMUL_SKINNY_STAGES": "4"},
    "simt": {"JK_MATMUL_SKINNY": "simt"},
    "pf0": {"JK_MATMUL_WGMMA_PREFETCH": "0"},                 # epilogue loads where used (before)
    "pf1": {"JK_MATMUL_WGMMA_PREFETCH": "1"},                 # next chunk's loads ahead only
    "pf2": {"JK_MATMUL_WGMMA_PREFETCH": "2"},                 # L2 prefetch of the residual only
    "sk1": {"JK_MATMUL_WGMMA_SPLITK": "1"},                   # wgmma without split-K
    "sk2": {"JK_MATMUL_WGMMA_SPLITK": "2"},                   # wgmma split-K over a cluster of 2
    "sk2w": {"JK_MATMUL_WGMMA_SPLITK": "2", "JK_MATMUL_WGMMA": "1"},  # forced onto wgmma
    "wg": {"JK_MATMUL_WGMMA": "1"},
    "cpasync": {"JK_MATMUL_SIMT": "cpasync"},
}

# name, dtype, (M, N, K), kind ("mm", "lin", "linres"), precision, variants besides ours/xla
DECODE = ("mma", "stream", "st_c2", "st_c4", "st_c8", "st_s4")
CASES = [  # most telling first: a run cut short still reports them
    ("bf16 8x4096x4096 (L2)", jnp.bfloat16, (8, 4096, 4096), "mm", None, DECODE),
    ("linear bf16 4096^3 +bias gelu +residual", jnp.bfloat16, (4096, 4096, 4096), "linres", None, ("pf0", "pf1", "pf2")),
    ("linear bf16 4096^3 +bias gelu (L2)", jnp.bfloat16, (4096, 4096, 4096), "lin", None, ("pf0", "pf1")),
    ("bf16 1000^3 (L2)", jnp.bfloat16, (1000, 1000, 1000), "mm", None, ("sk1", "sk2")),
    ("bf16 1x4096x4096", jnp.bfloat16, (1, 4096, 4096), "mm", None, ("stream", "simt")),
    ("bf16 4x4096x4096", jnp.bfloat16, (4, 4096, 4096), "mm", None, ("stream", "mma")),
    ("bf16 8x4096x14336 (DRAM)", jnp.bfloat16, (8, 4096, 14336), "mm", None, ("mma", "st_c2", "st_c8")),
    ("bf16 8x14336x4096 (DRAM)", jnp.bfloat16, (8, 14336, 4096), "mm", None, ("mma",)),
    ("linear bf16 8x4096x4096 bias+gelu", jnp.bfloat16, (8, 4096, 4096), "lin", None, ("mma",)),
    ("f16 8x4096x4096", jnp.float16, (8, 4096, 4096), "mm", None, ("mma",)),
    ("bf16 768x768x768", jnp.bfloat16, (768, 768, 768), "mm", None, ("sk2w",)),
    ("bf16 1024x2048x1024", jnp.bfloat16, (1024, 2048, 1024), "mm", None, ("sk1", "sk2")),
    ("bf16 4096^3 (L2)", jnp.bfloat16, (4096, 4096, 4096), "mm", None, ()),
    ("f16 4096^3 (L2)", jnp.float16, (4096, 4096, 4096), "mm", None, ()),
    ("bf16 16384x1024x4096", jnp.bfloat16, (16384, 1024, 4096), "mm", None, ()),
    ("bf16 8192^3", jnp.bfloat16, (8192, 8192, 8192), "mm", None, ()),
    ("f32 HIGHEST 512x512x256 (L2)", jnp.float32, (512, 512, 256), "mm", HI, ()),
]


def fn(kind, case_kind, precision):
    """A fresh function object per variant: its own jit cache entry and executable."""
    if case_kind == "mm":
        if kind == "xla":
            return jax.jit(lambda a, b: jnp.matmul(a, b, precision=precision))
        return jax.jit(lambda a, b: jk.matmul(a, b, precision=precision))
    if case_kind == "lin":
        if kind == "xla":
            return jax.jit(lambda a, b, c: ref.linear(a, b, c, activation="gelu"))
        return jax.jit(lambda a, b, c: jk.linear(a, b, c, activation="gelu"))
    if kind == "xla":
        return jax.jit(lambda a, b, c, r: ref.linear(a, b, c, activation="gelu", residual=r))
    return jax.jit(lambda a, b, c, r: jk.linear(a, b, c, activation="gelu", residual=r))


def reference(args, case_kind):
    a, b = args[0], args[1]
    rows = sample_rows(a.shape[0])
    f64 = lambda x: np.asarray(jnp.asarray(x, jnp.float32), np.float64)  # noqa: E731
    r = f64(a[rows]) @ f64(b)
    if case_kind != "mm":
        r = r + f64(args[2])
        r = 0.5 * r * (1 + np.vectorize(_erf)(r / np.sqrt(2)))
    if case_kind == "linres":
        r = r + f64(args[3][rows])
    return rows, r


def rel_err(out, rows, r):
    o = np.asarray(jnp.asarray(out[rows], jnp.float32), np.float64)
    return float(np.max(np.abs(o - r)) / np.max(np.abs(r)))


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else ""
    print(f"device: {jax.devices()[0].device_kind}")
    table = []
    key = jax.random.key(0)
    for name, dtype, (m, n, k), ck, prec, extra in CASES:
        if flt not in name:
            continue
        ka, kb, kc, kr, key = jax.random.split(key, 5)
        a = jax.random.normal(ka, (m, k), jnp.float32).astype(dtype)
        b = (jax.random.normal(kb, (k, n), jnp.float32) / (np.sqrt(k) if ck != "mm" else 1.0)).astype(dtype)
        args = (a, b)
        if ck != "mm":
            args += (jax.random.normal(kc, (n,), jnp.float32).astype(dtype),)
        if ck == "linres":
            args += (jax.random.normal(kr, (m, n), jnp.float32).astype(dtype),)
        rows, r64 = reference(args, ck)
        iters = 5 if m * n * k >= 8192 ** 3 else 20
        res = {}
        for kind in ("ours",) + extra + ("xla",):
            env = VARIANTS.get(kind, {})
            os.environ.update(env)
            try:
                f = fn(kind, ck, prec)
                res[kind] = (median_ms(f, args, iters), rel_err(f(*args), rows, r64))
            except Exception as ex:  # one broken case must not hide the others
                print(f"{name} {kind}: FAILED {type(ex).__name__}: {str(ex)[:300]}")
                res[kind] = (float("nan"), float("nan"))
            finally:
                for v in env:
                    os.environ.pop(v, None)
        flop = 2.0 * m * n * k
        nbytes = sum(x.size * x.dtype.itemsize for x in args) + m * n * jnp.dtype(dtype).itemsize
        print(name, {kk: (round(v[0] * 1e3, 2), f"{v[1]:.1e}") for kk, v in res.items()}, flush=True)
        table.append((name, flop, nbytes, res))
        del a, b, args
    print("\nus; jnp/x > 1 means x beats jnp (XLA); GB/s = inputs + output bytes / time")
    print("| case | variant | us | TFLOP/s | GB/s | jnp us | jnp/x | err | err jnp |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, flop, nbytes, res in table:
        x, ex = res["xla"]
        for kind, (t, e) in res.items():
            if kind == "xla":
                continue
            print(f"| {name} | {kind} | {t * 1e3:.1f} | {flop / (t * 1e-3) / 1e12:.0f} | {nbytes / (t * 1e-3) / 1e9:.0f} "
                  f"| {x * 1e3:.1f} | {x / t:.2f}x | {e:.1e} | {ex:.1e} |")


if __name__ == "__main__":
    main()
