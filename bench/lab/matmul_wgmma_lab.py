"""The Hopper tier (kWgmmaTma: TMA + wgmma) against the mma.sync tier and jnp.matmul, in one process.

CUPTI kernel time (jax.experimental.mosaic.gpu.profiler.measure, median of N calls of the jitted function),
random normal inputs. "wgmma" is the call with JK_MATMUL_WGMMA=1 (plain matmuls: the TMA-store epilogue),
"row8" the same with JK_MATMUL_WGMMA_EPI=row8 (plain matmuls through the fused epilogue, StoreRow8), "pp" with
JK_MATMUL_WGMMA_SCHED=pingpong (plain matmuls: ping-pong schedule, 128x128 tiles; LAB_PP=0 leaves it out), "mma"
(only with LAB_MMA=1) the same call with JK_MATMUL_WGMMA=0 (the launcher reads both variables at every
launch; each variant is its own jitted function, so a captured command buffer of one cannot serve the other). Relative error = max |out - ref| / max |ref| over
96 rows (first, middle and last 32) against float64 NumPy. Usage: python bench/lab/matmul_wgmma_lab.py [filter]
"""
from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from math import erf as _erf

import jax_kernels as jk
from jax_kernels import reference as ref

# name, dtype, (M, N, K), linear with bias+gelu
CASES = [  # most telling first: a run cut short still reports them
    ("bf16 4096^3", jnp.bfloat16, (4096, 4096, 4096), False),
    ("linear bf16 4096^3 bias+gelu", jnp.bfloat16, (4096, 4096, 4096), True),
    ("bf16 8192x8192x2048", jnp.bfloat16, (8192, 8192, 2048), False),
    ("bf16 2048^3", jnp.bfloat16, (2048, 2048, 2048), False),
    ("bf16 8192^3", jnp.bfloat16, (8192, 8192, 8192), False),
    ("f16 4096^3", jnp.float16, (4096, 4096, 4096), False),
    ("bf16 16384x1024x4096", jnp.bfloat16, (16384, 1024, 4096), False),
    ("bf16 1000^3", jnp.bfloat16, (1000, 1000, 1000), False),
]


# Cases also timed with the 128x128 tile forced (the automatic choice there is 128x256).
WIDTH_CASES = ("bf16 4096^3", "bf16 8192x8192x2048")


def median_ms(f, args, iterations):
    from jax.experimental.mosaic.gpu.profiler import measure
    jax.block_until_ready(f(*args))  # compile + warm-up under the current environment
    _, ts = measure(f, iterations=iterations)(*args)
    return float(np.median(np.asarray(ts)))


def sample_rows(m):
    return np.unique(np.concatenate([np.arange(min(32, m)), np.arange(m // 2, min(m // 2 + 32, m)),
                                     np.arange(max(0, m - 32), m)]))


def reference_rows(a, b, bias, lin):
    """float64 NumPy reference of the sampled rows, computed once per case."""
    rows = sample_rows(a.shape[0])
    r = np.asarray(a[rows].astype(jnp.float32), np.float64) @ np.asarray(b.astype(jnp.float32), np.float64)
    if lin:
        r = r + np.asarray(bias.astype(jnp.float32), np.float64)
        r = 0.5 * r * (1 + np.vectorize(_erf)(r / np.sqrt(2)))
    return rows, r


def rel_err(out, rows, r):
    o = np.asarray(jnp.asarray(out[rows], jnp.float32), np.float64)
    return float(np.max(np.abs(o - r)) / np.max(np.abs(r)))


def variant(kind, lin):
    """A fresh function object per variant: its own jit cache entry and executable."""
    if kind == "xla":
        return jax.jit(lambda a, b, c: ref.linear(a, b, c, activation="gelu")) if lin else \
            jax.jit(lambda a, b: jnp.matmul(a, b))
    return jax.jit(lambda a, b, c: jk.linear(a, b, c, activation="gelu")) if lin else \
        jax.jit(lambda a, b: jk.matmul(a, b))


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else ""
    print(f"device: {jax.devices()[0].device_kind}")
    table = []
    key = jax.random.key(0)
    for name, dtype, (m, n, k), lin in CASES:
        if flt not in name:
            continue
        ka, kb, kc, key = jax.random.split(key, 4)
        a = jax.random.normal(ka, (m, k), jnp.float32).astype(dtype)
        b = (jax.random.normal(kb, (k, n), jnp.float32) / (np.sqrt(k) if lin else 1.0)).astype(dtype)
        bias = jax.random.normal(kc, (n,), jnp.float32).astype(dtype)
        args = (a, b, bias) if lin else (a, b)
        iters = 5 if m * n * k >= 8192 ** 3 else 20
        res = {}
        plain = () if lin else ("row8",) + (("pp",) if os.environ.get("LAB_PP", "1") == "1" else ())
        kinds = (("wgmma",) + plain + (("mma",) if os.environ.get("LAB_MMA") else ()) + ("xla",)
                 + (("w128",) if name in WIDTH_CASES else ()))
        rows, r64 = reference_rows(a, b, bias, lin)
        for kind in kinds:
            env = {"wgmma": "1", "row8": "1", "pp": "1", "mma": "0", "w128": "128"}.get(kind)
            if env is None:
                os.environ.pop("JK_MATMUL_WGMMA", None)
            else:
                os.environ["JK_MATMUL_WGMMA"] = env
            if kind == "row8":
                os.environ["JK_MATMUL_WGMMA_EPI"] = "row8"
            if kind == "pp":
                os.environ["JK_MATMUL_WGMMA_SCHED"] = "pingpong"
            try:
                f = variant(kind, lin)
                t = median_ms(f, args, iters)
                e = rel_err(f(*args), rows, r64)
                res[kind] = (t, e)
            except Exception as ex:  # one broken case must not hide the others
                print(f"{name} {kind}: FAILED {type(ex).__name__}: {str(ex)[:300]}")
                res[kind] = (float("nan"), float("nan"))
            finally:
                os.environ.pop("JK_MATMUL_WGMMA", None)
                os.environ.pop("JK_MATMUL_WGMMA_EPI", None)
                os.environ.pop("JK_MATMUL_WGMMA_SCHED", None)
        flop = 2.0 * m * n * k
        row = (name, flop, res)
        if "w128" in res:
            print(f"  {name}: forced 128x128 tile {res['w128'][0] * 1e3:.1f} us ({flop / (res['w128'][0] * 1e-3) / 1e12:.0f}"
                  f" TFLOP/s), rel err {res['w128'][1]:.1e}")
        print(name, {kk: (round(v[0] * 1e3, 1), f"{v[1]:.1e}") for kk, v in res.items()}, flush=True)
        table.append(row)
        del a, b, bias, args
    nan = (float("nan"), float("nan"))
    print("\nus (TFLOP/s); XLA/x > 1 means x beats XLA; wgmma = default dispatch (plain: TMA-store epilogue), "
          "row8 = fused epilogue, pp = ping-pong schedule")
    print("| case | wgmma | row8 | pingpong | XLA | XLA/wgmma | XLA/row8 | XLA/pp | err wgmma | err row8 | err pp | err XLA |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, flop, res in table:
        g = lambda kk: res.get(kk, nan)  # noqa: E731
        cell = lambda kk: f"{g(kk)[0] * 1e3:.1f} ({flop / (g(kk)[0] * 1e-3) / 1e12:.0f})"  # noqa: E731
        x = g("xla")[0]
        print(f"| {name} | {cell('wgmma')} | {cell('row8')} | {cell('pp')} | {cell('xla')} | {x / g('wgmma')[0]:.2f}x "
              f"| {x / g('row8')[0]:.2f}x | {x / g('pp')[0]:.2f}x | {g('wgmma')[1]:.1e} | {g('row8')[1]:.1e} "
              f"| {g('pp')[1]:.1e} | {g('xla')[1]:.1e} |")


if __name__ == "__main__":
    main()
