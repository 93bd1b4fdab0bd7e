"""Session-4 small/odd-shape matmul lab (issue #6): decode (SkinnyPipe vs the tiers before), exact float32
split-K, bf16 1000^3, against jnp in one process.

CUPTI kernel time (jax.experimental.mosaic.gpu.profiler.measure, median of 20 calls of the jitted function),
random normal inputs. Each variant is its own jitted function, run with its environment variables set (the
launcher reads them at every launch; run with XLA_FLAGS=--xla_gpu_enable_command_buffer= so no graph replays
an older choice). err = max |out - ref| / max |ref| over up to 96 rows against float64 NumPy.
Usage: python bench/lab/matmul_small_s4_lab.py [filter]
Results: bench/lab/matmul_small_s4_h200.md (raw log matmul_small_s4_lab_h200.txt).
"""
from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax_kernels as jk  # noqa: E402
from jax_kernels import reference as ref  # noqa: E402
from matmul_s3_lab import reference, rel_err  # noqa: E402
from matmul_wgmma_lab import median_ms  # noqa: E402

HI = jax.lax.Precision.HIGHEST
P = {"JK_MATMUL_PIPE": "1"}
VARIANTS = {
    "ours": {},                                                       # the default dispatch
    "old": {"JK_MATMUL_PIPE": "0"},                                   # the tiers before (SkinnyM/SkinnyMma/mma)
    "p128c1": {**P, "JK_MATMUL_PIPE_CW": "128", "JK_MATMUL_PIPE_CTAS_PER_SM": "1"},
    "p128c2": {**P, "JK_MATMUL_PIPE_CW": "128", "JK_MATMUL_PIPE_CTAS_PER_SM": "2"},
    "p128c4": {**P, "JK_MATMUL_PIPE_CW": "128", "JK_MATMUL_PIPE_CTAS_PER_SM": "4"},
    "p64c1": {**P, "JK_MATMUL_PIPE_CW": "64", "JK_MATMUL_PIPE_CTAS_PER_SM": "1"},
    "p64c2": {**P, "JK_MATMUL_PIPE_CW": "64", "JK_MATMUL_PIPE_CTAS_PER_SM": "2"},
    "p256": {**P, "JK_MATMUL_PIPE_CW": "256"},
    "p128c1s8": {**P, "JK_MATMUL_PIPE_CW": "128", "JK_MATMUL_PIPE_CTAS_PER_SM": "1", "JK_MATMUL_PIPE_STAGES": "8"},
    "s1": {"JK_MATMUL_SIMT_SPLIT": "1"},                              # exact f32 before (no split)
    "s2": {"JK_MATMUL_SIMT_SPLIT": "2", "JK_MATMUL_SIMT_TILE": "32"},
    "s4": {"JK_MATMUL_SIMT_SPLIT": "4", "JK_MATMUL_SIMT_TILE": "32"},
    "s8": {"JK_MATMUL_SIMT_SPLIT": "8", "JK_MATMUL_SIMT_TILE": "32"},
    "w2": {"JK_MATMUL_SIMT_SPLIT": "2", "JK_MATMUL_SIMT_TILE": "64"},
    "w4": {"JK_MATMUL_SIMT_SPLIT": "4", "JK_MATMUL_SIMT_TILE": "64"},
    "w8": {"JK_MATMUL_SIMT_SPLIT": "8", "JK_MATMUL_SIMT_TILE": "64"},
    # Session 16: 64x64 split tiles with two 256-thread k groups a CTA (JK_MATMUL_SIMT_GROUPS=2); "g2" with the
    # default split, "w1g2" without a cluster. (32-deep k-tiles, JK_MATMUL_SIMT_BK=32, lost: s16_h200.md.)
    "g2": {"JK_MATMUL_SIMT_GROUPS": "2"},
    "w1g2": {"JK_MATMUL_SIMT_SPLIT": "1", "JK_MATMUL_SIMT_TILE": "64", "JK_MATMUL_SIMT_GROUPS": "2"},
    "w2g2": {"JK_MATMUL_SIMT_SPLIT": "2", "JK_MATMUL_SIMT_TILE": "64", "JK_MATMUL_SIMT_GROUPS": "2"},
    "w4g2": {"JK_MATMUL_SIMT_SPLIT": "4", "JK_MATMUL_SIMT_TILE": "64", "JK_MATMUL_SIMT_GROUPS": "2"},
    "w8g2": {"JK_MATMUL_SIMT_SPLIT": "8", "JK_MATMUL_SIMT_TILE": "64", "JK_MATMUL_SIMT_GROUPS": "2"},
}
DEC = ("old", "p128c1", "p128c2", "p64c1", "p64c2", "p256", "p128c1s8")
F32 = ("s1", "s2", "s4", "s8", "w2", "w4", "w8")
F32W = ("w2", "w4", "w8", "g2", "w1g2", "w2g2", "w4g2", "w8g2")  # session 16: the 64x64 split tiles, k groups
CASES = [  # most telling first: a run cut short still reports them
    ("bf16 8x4096x4096 (L2)", jnp.bfloat16, (8, 4096, 4096), "mm", None, DEC),
    ("f32 HIGHEST 512x512x256 (L2)", jnp.float32, (512, 512, 256), "mm", HI, F32),
    ("bf16 1000^3 (L2)", jnp.bfloat16, (1000, 1000, 1000), "mm", None, ("wg128", "wg256", "sk2", "nowg")),
    ("bf16 1x4096x4096", jnp.bfloat16, (1, 4096, 4096), "mm", None, DEC),
    ("bf16 4x4096x4096", jnp.bfloat16, (4, 4096, 4096), "mm", None, DEC),
    ("bf16 16x4096x4096", jnp.bfloat16, (16, 4096, 4096), "mm", None, DEC),
    ("f16 1x4096x4096", jnp.float16, (1, 4096, 4096), "mm", None, ("old", "p128c2", "p64c2")),
    ("f16 4x4096x4096", jnp.float16, (4, 4096, 4096), "mm", None, ("old", "p128c2", "p64c2")),
    ("f16 8x4096x4096", jnp.float16, (8, 4096, 4096), "mm", None, ("old", "p128c2", "p64c2")),
    ("f16 16x4096x4096", jnp.float16, (16, 4096, 4096), "mm", None, ("old", "p128c2", "p64c2")),
    ("bf16 8x4096x14336 (DRAM)", jnp.bfloat16, (8, 4096, 14336), "mm", None, ("old", "p128c1", "p64c2", "p256", "p128c1s8")),
    ("bf16 8x14336x4096 (DRAM)", jnp.bfloat16, (8, 14336, 4096), "mm", None, ("old", "p128c1", "p64c2", "p256", "p128c1s8")),
    ("linear bf16 8x4096x4096 bias+gelu", jnp.bfloat16, (8, 4096, 4096), "lin", None, ("old",)),
    ("bf16 32x4096x4096 (off the tier)", jnp.bfloat16, (32, 4096, 4096), "mm", None, ()),
    ("f32 HIGHEST 256^3", jnp.float32, (256, 256, 256), "mm", HI, F32),
    ("f32 HIGHEST 512^3", jnp.float32, (512, 512, 512), "mm", HI, F32),
    ("f32w HIGHEST 512x512x256 (L2)", jnp.float32, (512, 512, 256), "mm", HI, F32W),
    ("f32w HIGHEST 512^3", jnp.float32, (512, 512, 512), "mm", HI, F32W),
    ("f32w HIGHEST 256^3", jnp.float32, (256, 256, 256), "mm", HI, F32W),
    ("f32w HIGHEST 384^3", jnp.float32, (384, 384, 384), "mm", HI, F32W),
    ("f32w HIGHEST 256x512x1024", jnp.float32, (256, 512, 1024), "mm", HI, F32W),
    ("f32w HIGHEST 4096^3 (unsplit)", jnp.float32, (4096, 4096, 4096), "mm", HI, ()),
    ("bf16 1024^3 (L2)", jnp.bfloat16, (1024, 1024, 1024), "mm", None, ("wg128", "sk2", "nowg")),
    ("bf16 777x1000x1003", jnp.bfloat16, (777, 1000, 1003), "mm", None, ()),
]


def fn(kind, case_kind, precision):
    if case_kind == "mm":
        if kind == "xla":
            return jax.jit(lambda a, b: jnp.matmul(a, b, precision=precision))
        return jax.jit(lambda a, b: jk.matmul(a, b, precision=precision))
    if kind == "xla":
        return jax.jit(lambda a, b, c: ref.linear(a, b, c, activation="gelu"))
    return jax.jit(lambda a, b, c: jk.linear(a, b, c, activation="gelu"))


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else ""
    print(f"device: {jax.devices()[0].device_kind}")
    table = []
    key = jax.random.key(0)
    for name, dtype, (m, n, k), ck, prec, extra in CASES:
        if flt not in name:
            continue
        ka, kb, kc, key = jax.random.split(key, 4)
        a = jax.random.normal(ka, (m, k), jnp.float32).astype(dtype)
        b = (jax.random.normal(kb, (k, n), jnp.float32) / (np.sqrt(k) if ck != "mm" else 1.0)).astype(dtype)
        args = (a, b)
        if ck != "mm":
            args += (jax.random.normal(kc, (n,), jnp.float32).astype(dtype),)
        rows, r64 = reference(args, ck)
        res = {}
        for kind in ("ours",) + extra + ("xla",):
            env = VARIANTS.get(kind, {})
            os.environ.update(env)
            try:
                f = fn(kind, ck, prec)
                res[kind] = (median_ms(f, args, 20), rel_err(f(*args), rows, r64))
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
    print("\nus; jnp/x > 1: x beats jnp (XLA); GB/s = inputs + output bytes / time")
    print("| case | variant | us | TFLOP/s | GB/s | jnp us | jnp/x | err | err jnp |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, flop, nbytes, res in table:
        x, ex = res["xla"]
        for kind, (t, e) in res.items():
            if kind == "xla":
                continue
            print(f"| {name} | {kind} | {t * 1e3:.1f} | {flop / (t * 1e-3) / 1e12:.1f} | {nbytes / (t * 1e-3) / 1e9:.0f} "
                  f"| {x * 1e3:.1f} | {x / t:.2f}x | {e:.1e} | {ex:.1e} |")


if __name__ == "__main__":
    main()
