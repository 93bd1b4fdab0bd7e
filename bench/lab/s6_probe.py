"""Session 6 probes, one process on the GPU (CUPTI kernel time, lower of two medians of up to 20 calls; ours and
jnp alternate; XLA command buffers off; JK_NORM_TIER / JK_MATMUL_* read at every launch).

1. norms: is the parameter traffic what holds float32 LayerNorm under RMSNorm on long rows? The same x with
   (scale, bias), scale only and no parameters, on the default dispatch (and 'block2 8 512' at 16384). If
   LayerNorm without parameters runs like RMSNorm, the output pass's scale/bias reads (from L2, every row)
   are the limit, not the statistics. At 8192/16384 also the 64-register tier ('block2 8 B'). (Its
   one-reduction LayerNorm variant, 'block2 8 B 1 1', was timed once and removed: bench/lab/s6_probe_h200.md.)
2. matmul: where bf16 1000^3 loses its time against 1024^3 (same 64 tiles of 128x128): M, N and K at 1000
   one at a time, ours against jnp, plus the 256-wide tile and split-K forced.

(A third part timed a paired two-read kernel, since removed: bench/lab/s6_probe_h200.md, section 3.)

  python bench/lab/s6_probe.py [--budget S] [--part norms|matmul|all] [--shapes MxNxK,...]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
os.environ["JK_NORM_TIER_DYNAMIC"] = "1"
os.environ.pop("JK_NORM_TIER", None)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from norm_half_lab import lab_measure, median_ms  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels import reference as ref  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
measure = lab_measure()
OUT_BUDGET = 40e9


def setenv(env):
    for k in ("JK_NORM_TIER", "JK_MATMUL_WGMMA", "JK_MATMUL_WGMMA_SPLITK"):
        os.environ.pop(k, None)
    os.environ.update(env)


def best_of_two(fns, args, iters):
    """{name: ms}: each (name, f, env) timed twice in alternating order, the lower median kept."""
    out = {}
    for rnd in range(2):
        for name, f, env in (fns if rnd == 0 else fns[::-1]):
            setenv(env)
            jax.block_until_ready(f(*args))
            t = median_ms(measure, f, args, iters)
            out[name] = min(out.get(name, 1e30), t)
    setenv({})
    return out


def ceiling_gbs():
    x1 = jax.random.normal(jax.random.key(1), ((1 << 28) if ON_GPU else (1 << 16),), jnp.float32)
    fc = jax.jit(lambda x: x * jnp.float32(1.0001))
    for _ in range(10):
        jax.block_until_ready(fc(x1))
    return 2 * x1.nbytes / (median_ms(measure, fc, (x1,), 20) * 1e-3) / 1e9


def norms(rows_default, t_end, ceiling):
    cases = [("f32", 16384), ("f32", 32768), ("f32", 65536), ("bf16", 65536), ("f32", 8192)]
    dts = {"f32": jnp.float32, "bf16": jnp.bfloat16}
    print("| dtype | cols | variant | us | % copy (x + y only) |")
    print("|---|---:|---|---:|---:|")
    for dname, cols in cases:
        if time.time() > t_end:
            print(f"budget: skipped {dname} {cols}")
            continue
        rows = rows_default if cols < 65536 else rows_default // 2
        if not ON_GPU:
            rows = 64
        dt = dts[dname]
        k1, k2, k3 = jax.random.split(jax.random.key(cols), 3)
        x = jax.random.normal(k1, (rows, cols), dt)
        s = (1.0 + 0.1 * jax.random.normal(k2, (cols,), jnp.float32)).astype(dt)
        b = (0.1 * jax.random.normal(k3, (cols,), jnp.float32)).astype(dt)
        fns = [
            ("ln s+b", jax.jit(lambda x, s, b: jk.layer_norm(x, s, b)), {}),
            ("ln s", jax.jit(lambda x, s, b: jk.layer_norm(x, s, None)), {}),
            ("ln none", jax.jit(lambda x, s, b: jk.layer_norm(x)), {}),
            ("rms s", jax.jit(lambda x, s, b: jk.rms_norm(x, s)), {}),
            ("rms none", jax.jit(lambda x, s, b: jk.rms_norm(x)), {}),
            ("jnp ln s+b", jax.jit(lambda x, s, b: ref.layer_norm(x, s, b)), {}),
        ]
        if dname == "f32" and cols in (8192, 16384):
            tier = "block2 8 512" if cols == 16384 else "block2 8 256"
            fns += [(f"ln s+b [{tier}]", fns[0][1], {"JK_NORM_TIER": tier}),
                    (f"ln none [{tier}]", fns[2][1], {"JK_NORM_TIER": tier}),
                    (f"rms s [{tier}]", fns[3][1], {"JK_NORM_TIER": tier})]
        iters = int(max(3, min(20, OUT_BUDGET // x.nbytes)))
        t = best_of_two(fns, (x, s, b), iters)
        for name, ms in t.items():
            print(f"| {dname} | {cols} | {name} | {ms * 1e3:.1f} | {100 * 2 * x.nbytes / (ms * 1e-3) / 1e9 / ceiling:.1f}% |",
                  flush=True)
        del x


def matmuls(t_end, shapes=None):
    shapes = shapes or [(1000, 1000, 1000), (1024, 1024, 1024), (1000, 1024, 1024), (1024, 1000, 1024),
                        (1024, 1024, 1000), (1024, 1000, 1000), (1000, 1000, 1024), (2000, 2000, 2000),
                        (2048, 2048, 2048)]
    print("| M | N | K | ours us | ours 256-wide | ours split-K | jnp us | jnp/ours |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m, n, k in shapes:
        if time.time() > t_end:
            print(f"budget: skipped {m}x{n}x{k}")
            continue
        if not ON_GPU:
            m, n, k = m // 8, n // 8, k // 8
        ka, kb = jax.random.split(jax.random.key(m + n + k))
        a = jax.random.normal(ka, (m, k), jnp.bfloat16)
        bm = jax.random.normal(kb, (k, n), jnp.bfloat16)
        ours = jax.jit(jk.matmul)
        theirs = jax.jit(jnp.matmul)
        t = best_of_two([("ours", ours, {}), ("w256", ours, {"JK_MATMUL_WGMMA": "256"}),
                         ("split", ours, {"JK_MATMUL_WGMMA_SPLITK": "2"}), ("jnp", theirs, {})], (a, bm), 20)
        print(f"| {m} | {n} | {k} | {t['ours'] * 1e3:.2f} | {t['w256'] * 1e3:.2f} | {t['split'] * 1e3:.2f} | "
              f"{t['jnp'] * 1e3:.2f} | {t['jnp'] / t['ours']:.2f}x |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=150.0)
    ap.add_argument("--part", default="all")
    ap.add_argument("--shapes", default="", help="matmul shapes MxNxK,... (default: the 1000/1024 set)")
    a = ap.parse_args()
    t_end = time.time() + a.budget
    print(f"device: {jax.devices()[0].device_kind}; jax {jax.__version__}")
    if a.part in ("all", "matmul"):
        matmuls(t_end, [tuple(int(v) for v in sh.split("x")) for sh in a.shapes.split(",")] if a.shapes else None)
    if a.part in ("all", "norms"):
        ceiling = ceiling_gbs()
        print(f"copy ceiling {ceiling:.0f} GB/s")
        norms(49152, t_end, ceiling)


if __name__ == "__main__":
    main()
