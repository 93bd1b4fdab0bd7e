"""Small, skinny and exact-float32 matmuls: ours (each variant) against jnp.matmul, in one process.

CUPTI kernel time (jax.experimental.mosaic.gpu.profiler.measure, median of 20 calls of the jitted function),
random normal inputs. Variants are selected by the environment variables the launcher reads at every launch
(each variant is its own jitted function): "ours" = default dispatch; "mma" = JK_MATMUL_SKINNY=mma (the tensor-core
SkinnyMma tier for every M <= 8), "simt" = JK_MATMUL_SKINNY=simt (the SIMT SkinnyM tier on decode shapes);
"cpasync" = JK_MATMUL_SIMT=cpasync (exact float32 fed by a cp.async ring instead of register double buffering);
"wgmma" = JK_MATMUL_WGMMA=1 (the Hopper tier forced on below its default size threshold); "mma1wave" =
JK_MATMUL_SKINNY_CTAS_PER_SM=2 (SkinnyMma sized for one wave of CTAs instead of two). Relative error = max |out - ref| / max |ref| over up to 96 rows (first, middle, last 32) against
float64 NumPy. Usage: python bench/lab/matmul_small_lab.py [filter]
"""
from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk
from jax_kernels import reference as ref
# Timing and the float64 row-sample check are the Hopper-tier lab's (same folder: on sys.path when run).
from matmul_wgmma_lab import median_ms, reference_rows, rel_err

HI = jax.lax.Precision.HIGHEST
ENV = {"mma": ("JK_MATMUL_SKINNY", "mma"), "simt": ("JK_MATMUL_SKINNY", "simt"),
       "cpasync": ("JK_MATMUL_SIMT", "cpasync"), "wgmma": ("JK_MATMUL_WGMMA", "1"),
       "mma1wave": ("JK_MATMUL_SKINNY_CTAS_PER_SM", "2")}

# name, dtype, (M, N, K), linear bias+gelu, precision, variants besides ours/xla
CASES = [  # most telling first
    ("bf16 8x4096x4096", jnp.bfloat16, (8, 4096, 4096), False, None, ("mma", "mma1wave", "simt")),
    ("bf16 1x4096x4096", jnp.bfloat16, (1, 4096, 4096), False, None, ("mma", "simt")),
    ("bf16 8x4096x14336", jnp.bfloat16, (8, 4096, 14336), False, None, ("mma", "mma1wave", "simt")),
    ("bf16 8x14336x4096", jnp.bfloat16, (8, 14336, 4096), False, None, ("mma", "simt")),
    ("linear bf16 8x4096x4096 bias+gelu", jnp.bfloat16, (8, 4096, 4096), True, None, ("mma", "simt")),
    ("f16 4x4096x4096", jnp.float16, (4, 4096, 4096), False, None, ("mma", "simt")),
    ("bf16 16x4096x4096 (past the skinny tier)", jnp.bfloat16, (16, 4096, 4096), False, None, ("wgmma",)),
    ("f32 HIGHEST 4096^3", jnp.float32, (4096, 4096, 4096), False, HI, ("cpasync",)),
    ("f32 HIGHEST 512x512x256", jnp.float32, (512, 512, 256), False, HI, ("cpasync",)),
    ("bf16 1000^3", jnp.bfloat16, (1000, 1000, 1000), False, None, ()),
    ("bf16 2048x2048x512", jnp.bfloat16, (2048, 2048, 512), False, None, ("wgmma",)),
    # GPT-2-small's projections (K = 768 < 1000: off the wgmma tier by default)
    ("bf16 8192x2304x768 gpt", jnp.bfloat16, (8192, 2304, 768), False, None, ("wgmma",)),
    ("bf16 8192x3072x768 gpt", jnp.bfloat16, (8192, 3072, 768), False, None, ("wgmma",)),
    ("bf16 8192x768x768 gpt", jnp.bfloat16, (8192, 768, 768), False, None, ("wgmma",)),
    ("bf16 4096x4096x256 gpt", jnp.bfloat16, (4096, 4096, 256), False, None, ("wgmma",)),
]


def variant(kind, lin, precision):
    if kind == "xla":
        return jax.jit(lambda a, b, c: ref.linear(a, b, c, activation="gelu", precision=precision)) if lin else \
            jax.jit(lambda a, b: jnp.matmul(a, b, precision=precision))
    return jax.jit(lambda a, b, c: jk.linear(a, b, c, activation="gelu", precision=precision)) if lin else \
        jax.jit(lambda a, b: jk.matmul(a, b, precision=precision))


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else ""
    print(f"device: {jax.devices()[0].device_kind}")
    table = []
    key = jax.random.key(0)
    for name, dtype, (m, n, k), lin, prec, extra in CASES:
        if flt not in name:
            continue
        ka, kb, kc, key = jax.random.split(key, 4)
        a = jax.random.normal(ka, (m, k), jnp.float32).astype(dtype)
        b = (jax.random.normal(kb, (k, n), jnp.float32) / (np.sqrt(k) if lin else 1.0)).astype(dtype)
        bias = jax.random.normal(kc, (n,), jnp.float32).astype(dtype)
        args = (a, b, bias) if lin else (a, b)
        rows, r64 = reference_rows(a, b, bias, lin)
        res = {}
        for kind in ("ours",) + extra + ("xla",):
            var, val = ENV.get(kind, (None, None))
            if var:
                os.environ[var] = val
            try:
                f = variant(kind, lin, prec)
                res[kind] = (median_ms(f, args, 20), rel_err(f(*args), rows, r64))
            except Exception as ex:  # one broken case must not hide the others
                print(f"{name} {kind}: FAILED {type(ex).__name__}: {str(ex)[:300]}")
                res[kind] = (float("nan"), float("nan"))
            finally:
                if var:
                    os.environ.pop(var, None)
        flop = 2.0 * m * n * k
        print(name, {kk: (round(v[0] * 1e3, 1), f"{v[1]:.1e}") for kk, v in res.items()}, flush=True)
        table.append((name, flop, res))
        del a, b, bias, args
    print("\nus (TFLOP/s); XLA/x > 1 means x beats XLA")
    print("| case | variant | us | TFLOP/s | XLA us | XLA/variant | err | err XLA |")
    print("|---|---|---|---|---|---|---|---|")
    for name, flop, res in table:
        x, ex = res["xla"]
        for kind, (t, e) in res.items():
            if kind == "xla":
                continue
            print(f"| {name} | {kind} | {t * 1e3:.1f} | {flop / (t * 1e-3) / 1e12:.1f} | {x * 1e3:.1f} "
                  f"| {x / t:.2f}x | {e:.1e} | {ex:.1e} |")


if __name__ == "__main__":
    main()
