"""Session 31: the norms' long-row kernels in their kLean forms (cuda/norm/norm_cluster.cuh: the merges' divisions on
the special-function unit, the parameter packs one pack ahead) against the default, in ONE process.

Variants (JK_NORM_LEAN, JK_NORM_HYBRID; both re-read at every launch, XLA command buffers off): "def" (the default
dispatch), "lean" (JK_NORM_LEAN=1), for float32 rows past 16384 "h1" / "h2" (the hybrid kernel's lean form at 6 + 10
/ 4 + 12 packs: LayerNorm lost on it before, 66-77% against the cluster tier's 80-83%, RMSNorm at 6 + 10; they spilled
24-40 bytes where their lean forms spill 0-8; RMSNorm's "lean" is already h2), and with --more (after lean became
the default for 16-bit rows and 6 + 10 packs the hybrid's) "plain" (JK_NORM_LEAN=0) and for 16-bit rows "ss"
(JK_NORM_SMEM_SCALE=1: the scale in shared memory, whose lean 16-bit forms no longer spill, or 16 bytes for
LayerNorm, against 16-40 in session 14, where it lost), jnp; --variants picks among those and "full" (JK_NORM_FULL=1:
16-bit LayerNorm's lean kFull form, no per-pack column checks) and "h3" (JK_NORM_HYBRID=3: float32 RMSNorm's hybrid
at 7 + 9 packs, lean) and "pairs" (JK_NORM_PAIRS=1, session 32: CTAs of two 512-thread halves, each its own row,
with the parameter rows in shared memory; norm_cluster_pairs.cuh) and "pairs_nofull" (its checked form where the rows
fill every rank, JK_NORM_PAIRS_FULL=0) and "pshort" (float32 rows of 2049-8192 columns on one CTA of it, 4 packs a
thread, JK_NORM_PAIRS_SHORT=1), each where it applies.
Method as s30_split_lab.py: CUPTI kernel time per call (profiler.measure), median of 20 calls, 3 rounds with the order
rotated (every round's median reported, the best taken; up to 20 calls, fewer where their outputs, all
alive during the measurement, would pass 30 GB); bytes = x read once + y written once; % of the copy ceiling
measured in the same process. Error: max |y - ref| / max(1, |ref|) against float64 NumPy over 8 rows.

  python bench/lab/s31_lean_lab.py [--quick] [--out FILE]
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
for k in ("JK_NORM_LEAN", "JK_NORM_HYBRID", "JK_NORM_CLUSTER", "JK_NORM_SMEM_SCALE", "JK_NORM_PAIRS",
          "JK_NORM_PAIRS_FULL", "JK_NORM_PAIRS_SHORT"):
    os.environ.pop(k, None)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import jax_kernels as jk  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from norm_half_lab import lab_inputs, lab_start, rel_error, rotated_rounds  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
DT = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16}
# The benchmark's long rows under 90% of the copy ceiling (session 30), and the cluster tier's one-CTA row (16384).
CASES = [((24576, 65536), "bf16"), ((24576, 65536), "f16"), ((49152, 32768), "f32"), ((24576, 65536), "f32"),
         ((49152, 16384), "f32"), ((49152, 32768), "bf16"),
         # session 32: rows that fill 61% of the row-pairs form's ranks (the default's CTAs are narrower there)
         ((49152, 20000), "f32"), ((24576, 40000), "bf16"), ((24576, 40000), "f16"),
         ((49152, 8192), "f32"), ((49152, 4096), "f32"), ((49152, 5120), "f32"), ((49152, 6144), "f32"),
         ((49152, 7168), "f32")]
VARIANTS = {"def": {}, "lean": {"JK_NORM_LEAN": "1"}, "h1": {"JK_NORM_LEAN": "1", "JK_NORM_HYBRID": "1"},
            "h2": {"JK_NORM_LEAN": "1", "JK_NORM_HYBRID": "2"}, "plain": {"JK_NORM_LEAN": "0"},
            "ss": {"JK_NORM_SMEM_SCALE": "1"}, "full": {"JK_NORM_FULL": "1"}, "h3": {"JK_NORM_HYBRID": "3"},
            "pairs": {"JK_NORM_PAIRS": "1"}, "pairs_nofull": {"JK_NORM_PAIRS": "1", "JK_NORM_PAIRS_FULL": "0"},
            "pshort": {"JK_NORM_PAIRS_SHORT": "1"},
            "jnp": {}}
KNOBS = ("JK_NORM_LEAN", "JK_NORM_HYBRID", "JK_NORM_SMEM_SCALE", "JK_NORM_FULL", "JK_NORM_PAIRS", "JK_NORM_PAIRS_FULL",
         "JK_NORM_PAIRS_SHORT")


def applies(v, op, dname, n):
    """Whether variant v reaches a kernel of its own for this case (else it would time the default twice)."""
    if v in ("h1", "h2", "h3"):
        return dname == "f32" and n > 16384 and (v != "h2" or op == "layer_norm") and (v != "h3" or op == "rms_norm")
    if v == "ss":
        return dname != "f32"
    if v == "full":
        return dname != "f32" and op == "layer_norm"
    if v == "pairs":  # session 32: the cluster tier's row-pairs form (norm_cluster_pairs.cuh)
        return n > (16384 if dname == "f32" else 32768)
    if v == "pshort":  # float32 rows of one CTA on it, 4 packs a thread
        return dname == "f32" and 2048 < n <= 8192
    if v == "pairs_nofull":  # its checked form where the rows fill every rank (float32 LayerNorm has no other)
        return n in (65536, 131072) and not (dname == "f32" and op == "layer_norm") or (
            dname == "f32" and op == "rms_norm" and n == 32768)
    return True


def jnp_norm(op):
    def ln(x, s, b):
        xf = x.astype(jnp.float32)
        m = xf.mean(-1, keepdims=True)
        v = ((xf - m) ** 2).mean(-1, keepdims=True)
        return ((xf - m) * jax.lax.rsqrt(v + 1e-5) * s.astype(jnp.float32) + b.astype(jnp.float32)).astype(x.dtype)

    def rms(x, s, b):
        xf = x.astype(jnp.float32)
        return (xf * jax.lax.rsqrt((xf * xf).mean(-1, keepdims=True) + 1e-6) * s.astype(jnp.float32)).astype(x.dtype)
    return jax.jit(ln if op == "layer_norm" else rms)


def ours(op):
    if op == "layer_norm":
        return jax.jit(lambda x, s, b: jk.layer_norm(x, s, b))
    return jax.jit(lambda x, s, b: jk.rms_norm(x, s))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dtypes", default="bf16,f16,f32", help="cases of these dtypes only")
    ap.add_argument("--more", action="store_true", help="the plain and ss variants; no h1 / h2")
    ap.add_argument("--variants", default="", help="comma-separated variants (with --more), each where it applies")
    ap.add_argument("--n", type=int, default=0, help="rows of this length only")
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"), "s31_lean_lab.txt"))
    a = ap.parse_args()
    measure, say, ceiling = lab_start(a.out)
    cases = CASES if ON_GPU and not a.quick else [((3, 4104), "f32"), ((2, 16392), "bf16"), ((3, 20000), "f32")]
    cases = [c for c in cases if c[1] in a.dtypes.split(",") and a.n in (0, c[0][1])]
    say(f"{'case':30s} {'def':>8s} {'lean':>8s} {'h1':>8s} {'h2':>8s} {'jnp':>8s}  ms; % copy def -> lean (h1, h2); "
        "x jnp; max err per variant; rounds")
    for shape, dname in cases:
        x, s, b = lab_inputs(shape, DT[dname])
        nbytes = 2 * x.nbytes
        for op in ("layer_norm", "rms_norm"):
            hybrid = dname == "f32" and shape[1] > 16384
            if a.more:
                chosen = a.variants.split(",") if a.variants else ["def", "plain", "ss", "jnp"]
                variants = [v for v in chosen if applies(v, op, dname, shape[1])]
                if len(variants) < 3:  # nothing but the default and jnp: not this lab's case
                    continue
            else:
                variants = [v for v in ("def", "lean", "h1", "h2", "jnp")
                            if v not in ("h1", "h2") or (hybrid and (v == "h1" or op == "layer_norm"))]
            iters = max(3, min(20, int(30e9 // x.nbytes)))
            fns = {v: (jnp_norm(op) if v == "jnp" else ours(op)) for v in variants}

            def use(v):
                for k in KNOBS:
                    os.environ.pop(k, None)
                os.environ.update(VARIANTS[v])
                return fns[v]
            errs = {}
            for v in variants:
                y = jax.block_until_ready(use(v)(x, s, b))
                if v != "jnp":
                    errs[v] = rel_error(x[:8], y[:8], s, b, op)
                del y
            times = rotated_rounds(measure, use, variants, (x, s, b), iters)
            best = {v: min(t) for v, t in times.items()}
            pct = {v: nbytes / (best[v] * 1e-3) / 1e9 / ceiling * 100 for v in best}
            name = f"{op} {dname} {'x'.join(map(str, shape))}"
            if a.more:
                say(f"{name:30s} " + " ".join(f"{v} {best[v]:.4f} ({pct[v]:.1f}%)" for v in variants) +
                    f"; x jnp {best['jnp'] / best['def']:.2f}; err " +
                    " / ".join(f"{v} {errs[v]:.1e}" for v in errs) + f"; {iters} calls; rounds " +
                    " | ".join(" ".join(f"{t:.4f}" for t in times[v]) for v in times))
                continue
            col = lambda v: f"{best[v]:8.4f}" if v in best else f"{'-':>8s}"  # noqa: E731
            extra = ", ".join(f"{v} {pct[v]:.1f}%" for v in ("h1", "h2") if v in pct)
            say(f"{name:30s} {col('def')} {col('lean')} {col('h1')} {col('h2')} {col('jnp')}  "
                f"{pct['def']:.1f}% -> {pct['lean']:.1f}%" + (f" ({extra})" if extra else "") +
                f"; {best['jnp'] / best['def']:.2f}x -> {best['jnp'] / best['lean']:.2f}x; err " +
                " / ".join(f"{v} {errs[v]:.1e}" for v in errs) + f"; {iters} calls; rounds " +
                " | ".join(" ".join(f"{t:.4f}" for t in times[v]) for v in times))
        del x
    for k in KNOBS:
        os.environ.pop(k, None)


if __name__ == "__main__":
    main()
