"""Per-device work of the sharded-axis step on ONE GPU: the statistics-only kernel, the apply kernel, our
one-shot kernel and the jnp one-shot, before (JK_STATS_APPLY_LEGACY=1: the two-read stats pass, the
elementwise ApplyStats / ColumnsKernel) and after (the row-wise kernels of norm_stats_apply.cuh and
softmax_stats_apply.cuh).

Method: CUPTI kernel time per call (jax.experimental.mosaic.gpu.profiler.measure), median of ITERS calls
after a warm-up; bytes = inputs read once + outputs written once (statistics included); GB/s = bytes /
median; % of the copy ceiling (x * c over 1 GiB float32, measured in this process, and of the 4299 GB/s
H200 figure). The legacy knob is read once per process, so "before" runs in a child process.

  python3 bench/lab/stats_apply_lab.py            # parent: after + one-shots, spawns the "before" child
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk
from jax_kernels import norms
from jax_kernels.softmax import softmax_apply, softmax_stats

ITERS = 20
H200_COPY = 4299.0
CASES = [  # (op, dtype, rows, n)
    ("ln", "bfloat16", 16384, 8192),
    ("ln", "float32", 16384, 8192),
    ("ln", "bfloat16", 16384, 32768),
    ("ln", "float32", 16384, 32768),
    ("rms", "bfloat16", 16384, 8192),
    ("softmax", "bfloat16", 32768, 4096),
]


# JK_LAB_DRY=1: tiny shapes and a host timer, to check the script on a CPU-only machine.
DRY = os.environ.get("JK_LAB_DRY") == "1"
if DRY:
    CASES = [(op, dt, 64, n // 64) for op, dt, _, n in CASES]


def med_ms(f, *args):
    jax.block_until_ready(f(*args))
    if DRY:
        import time
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        return (time.perf_counter() - t0) * 1e3
    from jax.experimental.mosaic.gpu.profiler import measure
    _, ts = measure(f, iterations=ITERS)(*args)
    ts = [t for t in ([ts] if np.isscalar(ts) else ts) if t is not None]
    return float(statistics.median(ts))


def case_fns(op, dtype, rows, n):
    """{kernel: (jitted fn, args, bytes)} for one case; arrays built here."""
    dt = jnp.dtype(dtype)
    k = jax.random.split(jax.random.key(0), 3)
    x = jax.random.normal(k[0], (rows, n), jnp.float32).astype(dt)
    sc = (1.0 + 0.1 * jax.random.normal(k[1], (n,), jnp.float32)).astype(dt)
    bi = (0.1 * jax.random.normal(k[2], (n,), jnp.float32)).astype(dt)
    xb, pb, sb = rows * n * dt.itemsize, n * dt.itemsize, rows * 4
    out = {}
    if op == "ln":
        mean, m2 = jax.jit(norms.layer_norm_stats)(x)
        rstd = jax.lax.rsqrt(m2 / n + 1e-5)
        out["stats"] = (jax.jit(norms.layer_norm_stats), (x,), xb + 2 * sb)
        out["apply"] = (jax.jit(norms.layer_norm_apply), (x, mean, rstd, sc, bi), 2 * xb + 2 * sb + 2 * pb)
        out["ours_1shot"] = (jax.jit(jk.layer_norm), (x, sc, bi), 2 * xb + 2 * pb)
        out["jnp_1shot"] = (jax.jit(lambda x, s, b: jk.reference.layer_norm(x, s, b)), (x, sc, bi), 2 * xb + 2 * pb)
    elif op == "rms":
        ms = jax.jit(norms.rms_norm_stats)(x)
        rstd = jax.lax.rsqrt(ms + 1e-6)
        out["stats"] = (jax.jit(norms.rms_norm_stats), (x,), xb + sb)
        out["apply"] = (jax.jit(norms.rms_norm_apply), (x, rstd, sc), 2 * xb + sb + pb)
        out["ours_1shot"] = (jax.jit(jk.rms_norm), (x, sc), 2 * xb + pb)
        out["jnp_1shot"] = (jax.jit(lambda x, s: jk.reference.rms_norm(x, s)), (x, sc), 2 * xb + pb)
    else:
        m, s = jax.jit(softmax_stats)(x)
        out["stats"] = (jax.jit(softmax_stats), (x,), xb + 2 * sb)
        out["apply"] = (jax.jit(softmax_apply), (x, m, s), 2 * xb + 2 * sb)
        out["ours_1shot"] = (jax.jit(jk.softmax), (x,), 2 * xb)
        out["jnp_1shot"] = (jax.jit(lambda x: jk.reference.softmax(x)), (x,), 2 * xb)
    return out


def run(kernels):
    res = {}
    for op, dtype, rows, n in CASES:
        name = f"{op} {dtype} {rows}x{n}"
        try:
            fns = case_fns(op, dtype, rows, n)
            for kname in kernels:
                f, args, nbytes = fns[kname]
                res[f"{name}|{kname}"] = (med_ms(f, *args), nbytes)
            del fns
        except Exception as e:  # noqa: BLE001 - one failing case must not lose the others
            print(f"FAILED {name}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
    return res


def copy_ceiling():
    x = jax.random.normal(jax.random.key(7), ((1 << (20 if DRY else 30)) // 4,), jnp.float32)
    ms = med_ms(jax.jit(lambda x: x * jnp.float32(1.0001)), x)
    return 2 * x.size * 4 / (ms * 1e-3) / 1e9


def check_same_results():
    """The new kernels agree with the one-shot ops on the lab shapes (a cheap sanity check)."""
    x = jax.random.normal(jax.random.key(1), (256, 8192), jnp.float32).astype(jnp.bfloat16)
    mean, m2 = norms.layer_norm_stats(x)
    y = norms.layer_norm_apply(x, mean, jax.lax.rsqrt(m2 / 8192 + 1e-5))
    d_ln = float(jnp.max(jnp.abs(y.astype(jnp.float32) - jk.layer_norm(x).astype(jnp.float32))))
    ys = softmax_apply(x, *softmax_stats(x))
    d_sm = float(jnp.max(jnp.abs(ys.astype(jnp.float32) - jk.softmax(x).astype(jnp.float32))))
    return d_ln, d_sm


def main():
    if os.environ.get("JK_LAB_CHILD") == "1":
        print("JSON" + json.dumps(run(os.environ["JK_LAB_KERNELS"].split(","))), flush=True)
        return
    print("device:", jax.devices()[0].device_kind, flush=True)

    def child(kernels, **knobs):  # the knobs are read once per process
        env = dict(os.environ, JK_LAB_CHILD="1", JK_LAB_KERNELS=",".join(kernels), **knobs)
        r = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=200)
        out = {}
        for line in r.stdout.splitlines():
            if line.startswith("JSON"):
                out = json.loads(line[4:])
        if r.returncode != 0 or not out:
            print(f"child {knobs} failed:", r.returncode, r.stderr[-2000:], flush=True)
        return out

    before = child(["stats", "apply"], JK_STATS_APPLY_LEGACY="1")
    u2 = child(["apply"], JK_STATS_APPLY_UNROLL="2")
    ceil = copy_ceiling()
    print(f"copy ceiling (x*c, 1 GiB f32): {ceil:.0f} GB/s", flush=True)
    print("max |composed - one-shot| (bf16 LN, softmax):", check_same_results(), flush=True)
    after = run(["stats", "apply", "ours_1shot", "jnp_1shot"])
    print(f"\n{'case':30s} {'kernel':10s} {'before ms':>9s} {'after ms':>9s} {'speedup':>7s} {'GB/s':>7s} "
          f"{'%ceil':>6s} {'%4299':>6s}")
    for op, dtype, rows, n in CASES:
        name = f"{op} {dtype} {rows}x{n}"
        for kname in ("stats", "apply", "ours_1shot", "jnp_1shot"):
            key = f"{name}|{kname}"
            if key not in after:
                continue
            ms, nbytes = after[key]
            b = before.get(key, [float("nan")])[0]
            gbs = nbytes / (ms * 1e-3) / 1e9
            print(f"{name:30s} {kname:10s} {b:9.3f} {ms:9.3f} {b / ms:7.2f} {gbs:7.0f} {100 * gbs / ceil:6.1f} "
                  f"{100 * gbs / H200_COPY:6.1f}")
        if f"{name}|apply" in u2 and f"{name}|apply" in after:
            print(f"{name:30s} {'apply U=2':10s} {'':9s} {u2[f'{name}|apply'][0]:9.3f} "
                  f"{after[f'{name}|apply'][0] / u2[f'{name}|apply'][0]:7.2f}  (vs U=4)")
        if all(f"{name}|{k}" in after for k in ("stats", "apply", "jnp_1shot")):
            sa = after[f"{name}|stats"][0] + after[f"{name}|apply"][0]
            sb = sum(before.get(f"{name}|{k}", [float("nan")])[0] for k in ("stats", "apply"))
            jn = after[f"{name}|jnp_1shot"][0]
            print(f"{name:30s} {'stats+apply':10s} {sb:9.3f} {sa:9.3f} {sb / sa:7.2f}   vs jnp 1-shot {jn:.3f} ms: "
                  f"{jn / sa:.2f}x (before {jn / sb:.2f}x)")
    print(flush=True)


if __name__ == "__main__":
    main()
