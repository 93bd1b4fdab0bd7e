"""Session 33: softmax / log_softmax's window tier (rows of n % P != 0 over 16-byte-aligned x and y, softmax_window.cuh)
with the window held in registers and read once, against jnp, in ONE process. Variants:
  regs  the default: WindowRowsRegsKernel where the window fits (JK_SOFTMAX_WINDOW_REGS unset), the two-pass kernel
        past it (float32 50257)
  two   JK_SOFTMAX_WINDOW_REGS=0: the two-pass kernel (session 32's default; the baseline)
  old   JK_SOFTMAX_WINDOW=0: the kVec = 1 tiers (before session 32)
  jnp   jax.nn.softmax / log_softmax
Method as s32_odd_softmax_lab.py (CUPTI kernel time, median of up to 20 calls, 3 rotated rounds, the best taken, XLA
command buffers off so that the knobs, re-read at every launch, take effect; % of the copy ceiling measured in the same
process). Checks per case: max |y - ref| / max(1, |ref|) of each variant against jnp and of regs against two (the same
formula, summed in another order: expect rounding-level differences, 0 where the two-pass kernel runs in both), the
share of elements where regs and two differ, and the NaN patterns equal; "ok" or "CHECK" at the end of the line. On a
CPU (no CUDA tiers) tiny shapes only, to check the script.

  python bench/lab/s33_softmax_window_lab.py [--out FILE] [--dtypes float32,bfloat16,float16] [--cols 1537,...]
(--dtypes / --cols: a subset, to split the lab over device calls.)
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
os.environ.pop("JK_SOFTMAX_WINDOW", None)
os.environ.pop("JK_SOFTMAX_WINDOW_REGS", None)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from norm_half_lab import lab_start, rotated_rounds  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
CASES = [(49152, 1537), (49152, 2051), (49152, 4099), (49152, 8195), (16384, 16381), (8192, 50257)]
MORE = [(49152, 1281), (49152, 3075), (49152, 6147), (24576, 12291)]  # --more: call 9's check of the 4-or-8 rule
CPU_CASES = [(5, 1537), (3, 4099)]
# --variants: another list. Call 7 ran "regs,noskip,jnp" on a build with a per-warp slot skip (knob
# JK_SOFTMAX_WINDOW_SKIP=0 for noskip), reverted after it: bench/lab/s33_h200.md.
VARIANTS = ["regs", "two", "old", "jnp"]
KNOBS = {"regs": {}, "two": {"JK_SOFTMAX_WINDOW_REGS": "0"}, "old": {"JK_SOFTMAX_WINDOW": "0"},
         "c2": {"JK_SOFTMAX_WINDOW_C": "2"}, "c4": {"JK_SOFTMAX_WINDOW_C": "4"}, "c8": {"JK_SOFTMAX_WINDOW_C": "8"},
         "c5": {"JK_SOFTMAX_WINDOW_C": "5"}, "c6": {"JK_SOFTMAX_WINDOW_C": "6"}}  # c5 / c6: session 34
# max |y - jnp| / max(1, |jnp|): a few output ulps (log_softmax's outputs reach ~log n + 10).
TOL = {"float32": 2e-5, "bfloat16": 2e-2, "float16": 4e-3}


def set_knobs(v):
    for k in ("JK_SOFTMAX_WINDOW", "JK_SOFTMAX_WINDOW_REGS", "JK_SOFTMAX_WINDOW_C"):
        os.environ.pop(k, None)
    os.environ.update(KNOBS.get(v, {}))


@jax.jit
def rel_diff(a, b):
    """max |a - b| / max(1, |b|) over the entries finite in both (float32, on the device)."""
    a, b = a.astype(jnp.float32), b.astype(jnp.float32)
    ok = jnp.isfinite(a) & jnp.isfinite(b)
    return jnp.max(jnp.where(ok, jnp.abs(a - b) / jnp.maximum(1.0, jnp.abs(b)), 0.0))


@jax.jit
def differ_share(a, b):
    """The share of entries whose bits differ (NaNs compared by position)."""
    same = (a == b) | (jnp.isnan(a) & jnp.isnan(b))
    return jnp.mean((~same).astype(jnp.float32))


@jax.jit
def same_nans(a, b):
    return jnp.all(jnp.isnan(a) == jnp.isnan(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"), "s33_softmax_window_lab.txt"))
    ap.add_argument("--dtypes", default="float32,bfloat16,float16")
    ap.add_argument("--cols", default="", help="comma-separated row lengths of CASES (default: all)")
    ap.add_argument("--more", action="store_true", help="also the rows of MORE")
    ap.add_argument("--cases", default="", help="ROWSxCOLS,...: these shapes instead of CASES (session 35)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="regs first, jnp last; of regs two old c2 c4 c5 c6 c8 jnp")
    a = ap.parse_args()
    variants = a.variants.split(",")
    ours = [v for v in variants if v != "jnp"]
    other = ours[1]  # compared bit for bit with regs
    dtypes = [jnp.dtype(d) for d in a.dtypes.split(",")]
    cols = {int(c) for c in a.cols.split(",") if c}
    measure, say, ceiling = lab_start(a.out)
    if not ON_GPU:
        say("no GPU: tiny shapes through the CPU implementation (the knobs do nothing there)")
    listed = [tuple(int(v) for v in c.split("x")) for c in a.cases.split(",") if c]
    for rows, n in (listed or CASES + (MORE if a.more else [])) if ON_GPU else CPU_CASES:
        if cols and n not in cols:
            continue
        for dt in dtypes:
            dname = np.dtype(dt).name
            x = jax.random.normal(jax.random.key(n), (rows, n), jnp.float32).astype(dt)
            nbytes = 2 * x.nbytes
            for name, f_ours, f_ref in [("softmax", jk.softmax, jax.nn.softmax),
                                        ("log_softmax", jk.log_softmax, jax.nn.log_softmax)]:
                fns = {v: jax.jit(f_ours) for v in ours}
                fns["jnp"] = jax.jit(f_ref)

                def use(v):
                    set_knobs(v)
                    return fns[v]
                out = {v: jax.block_until_ready(use(v)(x)) for v in variants}  # each under its own knobs
                err = {v: float(rel_diff(out[v], out["jnp"])) for v in ours}
                d_rt = float(rel_diff(out["regs"], out[other]))
                differ = float(differ_share(out["regs"], out[other]))
                nan_same = all(bool(same_nans(out[v], out["jnp"])) for v in ours)
                ok = nan_same and all(e <= TOL[dname] for e in err.values()) and d_rt <= TOL[dname]
                del out
                times = rotated_rounds(measure, use, variants, (x,), max(3, min(20, int(30e9 // x.nbytes))))
                set_knobs("regs")
                best = {v: min(t) for v, t in times.items()}
                pct = {v: nbytes / (best[v] * 1e-3) / 1e9 / ceiling * 100 for v in best}
                say(f"{name:11s} {dname:8s} {rows}x{n:<6d} " +
                    " ".join(f"{v} {best[v] * 1e3:8.1f} us ({pct[v]:5.1f}%)" for v in best) +
                    "; x jnp " + " ".join(f"{v} {best['jnp'] / best[v]:.2f}" for v in ours) +
                    f"; regs/{other} {best[other] / best['regs']:.2f}; vs jnp " +
                    " / ".join(f"{v} {err[v]:.1e}" for v in err) +
                    f"; regs-{other} {d_rt:.1e} ({differ * 100:.2f}% differ); NaNs {'same' if nan_same else 'DIFFER'}; " +
                    ("ok" if ok else "CHECK"))
            del x
    set_knobs("regs")


if __name__ == "__main__":
    main()
