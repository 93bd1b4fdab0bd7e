"""bf16 matmuls whose rows do not start on 128-byte boundaries (K or N not a multiple of 64): the Hopper tier's
default tile against 128x64 (alone and in multicast pairs, JK_MATMUL_WGMMA_MC=1), 128x128 and 128x256 forced
(JK_MATMUL_WGMMA=64|128|256), against jnp. Aligned shapes as
controls, and fused `linear` cases; with --l2 the default width under the tensor maps' L2 promotions instead; with --load TMA against cp.async
k-tile loads (JK_MATMUL_WGMMA_LOAD: a knob of the cp.async producers sessions 7 and 16 timed and removed again,
bench/lab/matmul_pitch_h200.md and s16_h200.md; patch s16_cpasync_producer.patch).

One process on the GPU: CUPTI kernel time (profiler.measure), the lower of two medians of up to 20 calls, the
variants and jnp alternating; XLA command buffers off; the JK_* knobs are read at every launch. Each variant's
output is compared with jnp's (max |ours - jnp| / max(1, |jnp|): bf16 rounding, ~1e-2, is expected; a wrong
tile shows as O(1)).

  python bench/lab/matmul_pitch_lab.py [--budget S] [--shapes MxNxK,...] [--linear]
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
KNOBS = ("JK_MATMUL_WGMMA", "JK_MATMUL_TMA_L2", "JK_MATMUL_WGMMA_MC", "JK_MATMUL_WGMMA_LOAD")
VARIANTS = [("default", {}), ("w64", {"JK_MATMUL_WGMMA": "64"}),
            ("w64mc1", {"JK_MATMUL_WGMMA": "64", "JK_MATMUL_WGMMA_MC": "1"}), ("w128", {"JK_MATMUL_WGMMA": "128"}),
            ("w256", {"JK_MATMUL_WGMMA": "256"})]
SHAPES = [(1000, 1000, 1000), (1024, 1024, 1024), (2000, 2000, 2000), (2048, 2048, 2048), (3000, 3000, 3000),
          (3072, 3072, 3072), (4000, 1000, 4000), (4096, 1024, 4096), (1000, 4000, 4000), (4096, 4096, 4096),
          (4096, 4096, 4000), (8192, 1000, 8192)]


def setenv(env):
    for k in KNOBS:
        os.environ.pop(k, None)
    os.environ.update(env)


def err(y, ref):
    y = np.asarray(y.astype(jnp.float32), np.float64)
    ref = np.asarray(ref.astype(jnp.float32), np.float64)
    return float(np.max(np.abs(y - ref) / np.maximum(1.0, np.abs(ref))))


def run_case(label, ours, theirs, args, t_end):
    if time.time() > t_end:
        print(f"| {label} | budget: skipped |", flush=True)
        return
    ref = jax.block_until_ready(theirs(*args))
    best, errs = {}, {}
    for rnd in range(2):
        order = VARIANTS + [("jnp", None)]
        for name, env in (order if rnd == 0 else order[::-1]):
            f = theirs if env is None else ours
            setenv(env or {})
            y = jax.block_until_ready(f(*args))
            if env is not None and rnd == 0:
                errs[name] = err(y, ref)
            best[name] = min(best.get(name, 1e30), median_ms(measure, f, args, 20))
    setenv({})
    cells = " | ".join(f"{best[n] * 1e3:.1f}" for n, _ in VARIANTS)
    worst = max(errs.values())
    print(f"| {label} | {cells} | {best['jnp'] * 1e3:.1f} | {best['jnp'] / best['default']:.2f}x | {worst:.1e} |",
          flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=150.0)
    ap.add_argument("--shapes", default="")
    ap.add_argument("--linear", action="store_true", help="also linear +bias gelu (+residual)")
    ap.add_argument("--l2", action="store_true",
                    help="the default width under the tensor maps' other L2 promotions (JK_MATMUL_TMA_L2) instead")
    ap.add_argument("--load", action="store_true",
                    help="the default tile with TMA against cp.async loads (JK_MATMUL_WGMMA_LOAD) instead")
    a = ap.parse_args()
    if a.load:
        VARIANTS[1:] = [("tma", {"JK_MATMUL_WGMMA_LOAD": "tma"}), ("cp", {"JK_MATMUL_WGMMA_LOAD": "cpasync"})]
    if a.l2:
        VARIANTS[1:] = [(f"l2_{v}", {"JK_MATMUL_TMA_L2": v}) for v in ("none", "64", "128")]
    t_end = time.time() + a.budget
    shapes = [tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")] if a.shapes else SHAPES
    print(f"device: {jax.devices()[0].device_kind}; jax {jax.__version__}")
    print("| case | " + " | ".join(n for n, _ in VARIANTS) + " | jnp | jnp/default | max err |")
    print("|---|" + "---:|" * (len(VARIANTS) + 3))
    for m, n, k in shapes:
        if not ON_GPU:
            m, n, k = max(1, m // 16), max(1, n // 16), max(1, k // 16)
        ka, kb, kc, kr = jax.random.split(jax.random.key(m + n + k), 4)
        x = jax.random.normal(ka, (m, k), jnp.bfloat16)
        w = jax.random.normal(kb, (k, n), jnp.bfloat16)
        run_case(f"matmul {m}x{n}x{k}", jax.jit(jk.matmul), jax.jit(jnp.matmul), (x, w), t_end)
        if a.linear:
            bias = jax.random.normal(kc, (n,), jnp.bfloat16)
            res = jax.random.normal(kr, (m, n), jnp.bfloat16)
            ours = jax.jit(lambda x, w, b, r: jk.linear(x, w, b, activation="gelu", residual=r))
            theirs = jax.jit(lambda x, w, b, r: jax.nn.gelu(x @ w + b, approximate=False) + r)
            run_case(f"linear gelu+res {m}x{n}x{k}", ours, theirs, (x, w, bias, res), t_end)
        del x, w


if __name__ == "__main__":
    main()
