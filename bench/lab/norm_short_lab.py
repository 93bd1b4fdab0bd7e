"""Short-row LayerNorm / RMSNorm lab: the current default dispatch, the persistent short-row tier
(norm_short.cuh) in several configurations and jnp, timed in ONE process on the GPU.

Method (/work/shared/reference/benchmarking.md): CUPTI kernel time per call (profiler.measure), median of 20
calls, two rounds in alternating order (reported: the lower of the two medians of each variant, so a
clock dip in one round does not decide); bytes = x read once + y written once + scale (+ bias); % of the
copy ceiling measured in the same process (jitted x * c over 1 GiB float32). Inputs are the benchmark's
(49152 rows, random normal, L2-warm below 50 MB as in bench/results/h200/results.md). Variants switch
through JK_NORM_TIER read at every launch (JK_NORM_TIER_DYNAMIC=1, XLA command buffers off).
Correctness of every variant: float64 NumPy on 64 sample rows, max |y - ref| / max(1, |ref|) against a per-dtype
bound (and, for float32 LayerNorm, a second input with row means of 1e4 and std 0.1, the case the shift exists
for, against 2e-2: one float32 ulp of the mean is 1e-2 of y there; reported scaled to the float32 bound).

  python bench/lab/norm_short_lab.py [--budget SECONDS] [--quick] [--cols 32,64] [--dtypes bf16,f16]

'packed C' (norm_short_packed.cuh, second lab run): bf16/f16 rows of 32-256 columns, C packs per lane;
float32 rows of 16-128 columns since session 15.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
os.environ["JK_NORM_TIER_DYNAMIC"] = "1"
os.environ.pop("JK_NORM_TIER", None)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from norm_half_lab import lab_measure, median_ms, rel_error  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
measure = lab_measure()  # a CPU dry run checks the script only (host clock)

import jax_kernels as jk  # noqa: E402
from jax_kernels import reference as ref  # noqa: E402

DTYPES = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16}
TOL = {"f32": 2e-5, "bf16": 2e-2, "f16": 4e-3}
# Measured 2026-11-21 (bench/lab/norm_short_h200.md): the first five. The lean variants (32-bit indices,
# float32 copies kept; last field 1) are compiled and emulated, not yet timed.
SHORT = ["short 1 0 0", "short 2 0 0", "short 4 0 0", "short 1 1 0", "short 2 1 0",
         "short 1 0 0 1", "short 2 0 0 1", "short 2 1 0 1"]
# Second run (16-bit rows of 32-256 columns): the old default, the lean persistent variants, the packed tier.
SHORT_HALF = ["short 2 0 0", "short 1 0 0 1", "short 2 0 0 1", "short 2 1 0 1"]
PACKED = ["packed 1", "packed 2", "packed 4"]


def med_ms(f, args, iters=20):
    return median_ms(measure, f, args, iters)


def set_tier(v):
    if v == "default":
        os.environ.pop("JK_NORM_TIER", None)
    else:
        os.environ["JK_NORM_TIER"] = v


def variants_for(cols, isz):
    packs = cols * isz // 16
    if isz == 2 and cols in (32, 64, 128, 256):
        return ["default"] + SHORT_HALF + [v for v in PACKED if packs // int(v.split()[1]) <= 32]
    if isz == 4 and cols in (16, 32, 64, 128):  # session 15: the packed tier written for float32 too
        return ["default", "short 2 1 0"] + [v for v in PACKED if packs // int(v.split()[1]) <= 32]
    out = ["default"]
    if packs <= 16:
        out.append("proposed")
    for v in SHORT:
        r = int(v.split()[1])
        if packs > 32 and r == 4:
            continue
        out.append(v)
    return out


def check(f, x, s, b, op, dname, n):
    r = x.shape[0]
    pick = np.unique(np.concatenate([[0, 1, r // 2, r - 2, r - 1], np.random.default_rng(0).integers(0, r, 59)]))
    return rel_error(x[pick], f(x, s, b)[pick], s, b, op)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=150.0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rows", type=int, default=49152 if ON_GPU else 512)
    ap.add_argument("--cols", default="")
    ap.add_argument("--dtypes", default="f32,bf16,f16")
    a = ap.parse_args()
    t_end = time.time() + a.budget

    x1 = jax.random.normal(jax.random.key(1), ((1 << 28) if ON_GPU else (1 << 16),), jnp.float32)
    fc = jax.jit(lambda x: x * jnp.float32(1.0001))
    for _ in range(30):
        jax.block_until_ready(fc(x1))
    ceiling = 2 * x1.nbytes / (med_ms(fc, (x1,)) * 1e-3) / 1e9
    del x1
    print(f"copy ceiling {ceiling:.0f} GB/s", flush=True)

    cols_list = [32, 128] if a.quick else [32, 128, 512, 1024]
    if a.cols:
        cols_list = [int(c) for c in a.cols.split(",")]
    order = [(c, d) for c in cols_list for d in a.dtypes.split(",")]
    rows_out = []
    for cols, dname in order:
        for op in ("layer_norm", "rms_norm"):
            if time.time() > t_end:
                print(f"budget: skipped {op} {dname} {cols}", flush=True)
                continue
            dt = DTYPES[dname]
            if cols * jnp.dtype(dt).itemsize // 16 > 128:
                continue  # beyond the short-row tier
            k1, k2, k3, k4 = jax.random.split(jax.random.key(cols * 7 + len(dname)), 4)
            x = jax.random.normal(k1, (a.rows, cols), dt)
            s = (1.0 + 0.1 * jax.random.normal(k2, (cols,), jnp.float32)).astype(dt)
            b = (0.1 * jax.random.normal(k3, (cols,), jnp.float32)).astype(dt)
            # rows of mean 1e4, std 0.1 (float32 only: 16-bit storage cannot hold 0.1 steps at 1e4)
            xl = (1e4 + 0.1 * jax.random.normal(k4, (256, cols), jnp.float32)).astype(dt) if dname == "f32" else None
            if op == "layer_norm":
                ours = jax.jit(lambda x, s, b: jk.layer_norm(x, s, b))
                theirs = jax.jit(lambda x, s, b: ref.layer_norm(x, s, b))
                nbytes = 2 * x.nbytes + 2 * s.nbytes
            else:
                ours = jax.jit(lambda x, s, b: jk.rms_norm(x, s))
                theirs = jax.jit(lambda x, s, b: ref.rms_norm(x, s))
                nbytes = 2 * x.nbytes + s.nbytes
            isz = jnp.dtype(dt).itemsize
            vs = variants_for(cols, isz)
            errs = {}
            for v in vs:
                set_tier(v)
                try:
                    e = check(ours, x, s, b, op, dname, cols)
                    if xl is not None and op == "layer_norm":
                        # mean 1e4, std 0.1: one float32 ulp of the mean is 1e-2 of y (tests/test_norms.py
                        # allows 1e-2 + 1e-2 |y|); scaled so that TOL applies
                        e = max(e, check(ours, xl, s, b, op, dname, cols) * TOL[dname] / 2e-2)
                    errs[v] = e
                except Exception as ex:  # noqa: BLE001
                    errs[v] = f"{type(ex).__name__}: {str(ex)[:100]}"
            set_tier("default")
            times = {v: [] for v in vs + ["jnp"]}
            for rnd in range(2):
                seq = vs + ["jnp"]
                if rnd:
                    seq = seq[::-1]
                for v in seq:
                    if isinstance(errs.get(v), str):
                        continue
                    if v == "jnp":
                        set_tier("default")
                        times[v].append(med_ms(theirs, (x, s, b)))
                    else:
                        set_tier(v)
                        times[v].append(med_ms(ours, (x, s, b)))
            set_tier("default")
            best = {v: min(t) for v, t in times.items() if t}
            rows_out.append((op, dname, cols, nbytes, best, errs))
            tj = best.get("jnp")
            line = " ".join(f"{v}={best[v] * 1e3:.2f}us" for v in vs if v in best)
            print(f"{op} {dname} {a.rows}x{cols}: jnp={tj * 1e3:.2f}us {line} "
                  f"errs={ {k: (round(v, 8) if isinstance(v, float) else v) for k, v in errs.items()} }", flush=True)
            del x, s, b, xl

    # compact table
    print("\n==== norm_short_lab (CUPTI, lower of two medians of 20 calls; ratio = jnp / ours; %copy of "
          f"{ceiling:.0f} GB/s)")
    allv = []  # the table's columns: every variant timed, in order
    for _, _, _, _, best, errs in rows_out:
        for v in list(errs) + list(best):
            if v != "jnp" and v not in allv:
                allv.append(v)
    print("| op | dtype | cols | jnp us | " + " | ".join(allv) + " | best | best ratio | best %copy | max err |")
    for op, dname, cols, nbytes, best, errs in rows_out:
        tj = best.get("jnp")
        cells = []
        for v in allv:
            if v in best:
                cells.append(f"{best[v] * 1e3:.2f} ({tj / best[v]:.2f}x)")
            elif isinstance(errs.get(v), str):
                cells.append("ERR")
            else:
                cells.append("-")
        cand = {v: t for v, t in best.items() if v != "jnp" and isinstance(errs.get(v), float)
                and errs[v] <= TOL[dname]}
        bad = [v for v, e in errs.items() if not isinstance(e, float) or e > TOL[dname]]
        bv = min(cand, key=cand.get) if cand else "-"
        bt = cand.get(bv)
        me = max((e for e in errs.values() if isinstance(e, float)), default=float("nan"))
        print(f"| {op} | {dname} | {cols} | {tj * 1e3:.2f} | " + " | ".join(cells) +
              f" | {bv} | {tj / bt if bt else 0:.2f}x | {nbytes / bt / 1e6 / ceiling * 100 if bt else 0:.0f}% | "
              f"{me:.1e}{' BAD:' + ','.join(bad) if bad else ''} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
