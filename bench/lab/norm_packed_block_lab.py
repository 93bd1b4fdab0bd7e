"""16-bit LayerNorm / RMSNorm rows of 512-32768 columns: the default dispatch, the packed row tier
(norm_packed_block.cuh) in each configuration, and jnp, timed in ONE process on the GPU.

Method (/work/shared/reference/benchmarking.md, as bench/lab/norm_short_lab.py): CUPTI kernel time per call
(profiler.measure), median of 20 calls (fewer only where 20 outputs would not fit: never at these shapes on
an H200), two rounds in alternating order, the lower of the two medians reported; bytes = x read once + y
written once + scale (+ bias); % of the copy ceiling measured in the same process (jitted x * c over 1 GiB
float32). Inputs: the benchmark's (49152 rows, random normal x, scale/bias of one row). Variants switch
through JK_NORM_TIER read at every launch (JK_NORM_TIER_DYNAMIC=1, XLA command buffers off).
Correctness of every variant: float64 NumPy on 64 sample rows, max |y - ref| / max(1, |ref|).

Variants: 'default' (the dispatch as built), 'pblock E' (a CTA per row, E = 16/32/64 elements per thread,
n / E threads), 'pwarp E B' (a warp per row, CTAs of B threads); for float32 LayerNorm at 4096 columns the
register tier's and the bulk tier's configurations ('block C B 1', 'bulk S B M'), at 8192-16384 columns
(--dtypes f32) the 64-register cap ('block2 8 B') against 'block 8 B 1' and 'tworeads 512'; 'layer_norm+stats' is
layer_norm(..., return_stats=True) against the jnp LayerNorm without statistics.

  python bench/lab/norm_packed_block_lab.py [--budget SECONDS] [--rows R] [--cols 1024,4096] [--dtypes bf16]
"""
from __future__ import annotations

import argparse
import math
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
COLS = [512, 1024, 2048, 4096, 8192, 16384, 32768]
OUT_BUDGET = 60e9  # bytes of outputs the profiler may keep alive per measurement
F32_4096 = ["block 8 128 1", "block 2 512 1", "bulk 0 128 0", "bulk 0 256 0", "bulk 2 128 0"]


def set_tier(v):
    if v == "default":
        os.environ.pop("JK_NORM_TIER", None)
    else:
        os.environ["JK_NORM_TIER"] = v


# float32 rows of 8192-16384 columns: the register tier capped at 64 registers (two CTAs of 512 threads per
# SM, 'block2 8 B', session 5, unmeasured) against the uncapped one and the two-read tier.
F32_LONG = {8192: ["block2 8 256", "block2 8 512", "block 8 256 1", "tworeads 512"],
            16384: ["block2 8 512", "block 8 512 1", "tworeads 512"]}


def variants_for(cols, dname):
    if dname == "f32":
        return ["default"] + (F32_4096 if cols == 4096 else F32_LONG.get(cols, []))
    packs = cols // 8
    out = ["default"]
    for e in (16, 32):
        if packs <= 32 * e // 8:
            out += [f"pwarp {e} 256", f"pwarp {e} 128"] if packs > 32 * e // 16 or e == 16 else []
    for e in (16, 32, 64):
        threads = -(-packs // (e // 8))
        if threads <= 512 and (threads >= 32 or e == 16):
            out.append(f"pblock {e}")
    return out


def check(f, x, s, b, op):
    r = x.shape[0]
    pick = np.unique(np.concatenate([[0, 1, r // 2, r - 2, r - 1], np.random.default_rng(0).integers(0, r, 59)]))
    y = f(x, s, b)
    y = y[0] if isinstance(y, tuple) else y
    return rel_error(x[pick], y[pick], s, b, "layer_norm" if op.startswith("layer_norm") else op)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=150.0)
    ap.add_argument("--rows", type=int, default=49152 if ON_GPU else 256)
    ap.add_argument("--cols", default="")
    ap.add_argument("--dtypes", default="bf16,f16")
    ap.add_argument("--no-extra", action="store_true", help="skip the float32 and return_stats cases")
    a = ap.parse_args()
    t_end = time.time() + a.budget

    x1 = jax.random.normal(jax.random.key(1), ((1 << 28) if ON_GPU else (1 << 16),), jnp.float32)
    fc = jax.jit(lambda x: x * jnp.float32(1.0001))
    for _ in range(30):
        jax.block_until_ready(fc(x1))
    ceiling = 2 * x1.nbytes / (median_ms(measure, fc, (x1,), 20) * 1e-3) / 1e9
    del x1
    print(f"copy ceiling {ceiling:.0f} GB/s", flush=True)

    cols_list = [int(c) for c in a.cols.split(",")] if a.cols else COLS
    cases = [(op, d, c) for d in a.dtypes.split(",") for c in cols_list for op in ("layer_norm", "rms_norm")]
    if not a.no_extra:
        cases += [("layer_norm", "f32", 4096)]
        cases += [("layer_norm+stats", "bf16", c) for c in (1024, 4096, 32768) if c in cols_list or not a.cols]
    rows_out = []
    for op, dname, cols in cases:
        if time.time() > t_end:
            print(f"budget: skipped {op} {dname} {cols}", flush=True)
            continue
        dt = DTYPES[dname]
        k1, k2, k3 = jax.random.split(jax.random.key(cols * 7 + len(dname)), 3)
        x = jax.random.normal(k1, (a.rows, cols), dt)
        s = (1.0 + 0.1 * jax.random.normal(k2, (cols,), jnp.float32)).astype(dt)
        b = (0.1 * jax.random.normal(k3, (cols,), jnp.float32)).astype(dt)
        if op.startswith("layer_norm"):
            stats = op.endswith("stats")
            ours = jax.jit(lambda x, s, b: jk.layer_norm(x, s, b, return_stats=stats))
            theirs = jax.jit(lambda x, s, b: ref.layer_norm(x, s, b))
            nbytes = 2 * x.nbytes + 2 * s.nbytes
        else:
            ours = jax.jit(lambda x, s, b: jk.rms_norm(x, s))
            theirs = jax.jit(lambda x, s, b: ref.rms_norm(x, s))
            nbytes = 2 * x.nbytes + s.nbytes
        iters = int(max(3, min(20, OUT_BUDGET // x.nbytes)))
        vs = variants_for(cols, dname)
        errs = {}
        for v in vs:
            set_tier(v)
            try:
                errs[v] = check(ours, x, s, b, op)
            except Exception as ex:  # noqa: BLE001
                errs[v] = f"{type(ex).__name__}: {str(ex)[:100]}"
        set_tier("default")
        times = {v: [] for v in vs + ["jnp"]}
        for rnd in range(2):
            seq = vs + ["jnp"]
            for v in (seq[::-1] if rnd else seq):
                if isinstance(errs.get(v), str):
                    continue
                set_tier("default" if v == "jnp" else v)
                times[v].append(median_ms(measure, theirs if v == "jnp" else ours, (x, s, b), iters))
        set_tier("default")
        best = {v: min(t) for v, t in times.items() if t}
        rows_out.append((op, dname, cols, nbytes, best, errs))
        tj = best["jnp"]
        print(f"{op} {dname} {a.rows}x{cols}: jnp={tj * 1e3:.2f}us "
              + " ".join(f"[{v}]={best[v] * 1e3:.2f}us" for v in vs if v in best)
              + f" errs={ {k: (float(f'{e:.2e}') if isinstance(e, float) else e) for k, e in errs.items()} }",
              flush=True)
        del x, s, b

    print(f"\n==== norm_packed_block_lab (CUPTI, lower of two medians of 20 calls; ratio = jnp / ours; %copy of "
          f"{ceiling:.0f} GB/s; best = fastest variant passing the f64 check) ====")
    print("| op | dtype | cols | jnp us | default us (x, %copy) | best variant | best us (x, %copy) | others (us) | max err |")
    geo = {}
    for op, dname, cols, nbytes, best, errs in rows_out:
        tj = best["jnp"]
        ok = {v: t for v, t in best.items() if v != "jnp" and isinstance(errs.get(v), float) and errs[v] <= TOL[dname]}
        bad = [v for v, e in errs.items() if not isinstance(e, float) or e > TOL[dname]]
        bv = min(ok, key=ok.get) if ok else "-"
        pct = lambda t: 100 * nbytes / t / 1e6 / ceiling  # noqa: E731
        d = best.get("default")
        others = " ".join(f"{v.replace('pblock ', 'b').replace('pwarp ', 'w').replace(' ', '/')}={t * 1e3:.1f}"
                          for v, t in best.items() if v not in ("jnp", "default", bv))
        me = max((e for e in errs.values() if isinstance(e, float)), default=float("nan"))
        print(f"| {op} | {dname} | {cols} | {tj * 1e3:.1f} | {d * 1e3:.1f} ({tj / d:.2f}x, {pct(d):.0f}%) | {bv} | "
              f"{ok[bv] * 1e3:.1f} ({tj / ok[bv]:.2f}x, {pct(ok[bv]):.0f}%) | {others} | {me:.1e}"
              f"{' BAD:' + ','.join(bad) if bad else ''} |" if d and ok else f"| {op} | {dname} | {cols} | ERR {errs} |")
        if d and ok:
            geo.setdefault((op, "default"), []).append(tj / d)
            geo.setdefault((op, "best"), []).append(tj / ok[bv])
    for (op, k), rs in geo.items():
        print(f"{op} {k}: geomean x{math.exp(sum(map(math.log, rs)) / len(rs)):.3f} min x{min(rs):.2f} over {len(rs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
