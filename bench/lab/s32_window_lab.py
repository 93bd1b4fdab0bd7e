"""Session 32: the norms' rows of n % P != 0 on the window tier (cuda/norm/norm_window.cuh, the default) against the
scalar tiers before it (JK_NORM_WINDOW=0) and jnp, in ONE process.

Method as s31_lean_lab.py (norm_half_lab.py's helpers): CUPTI kernel time per call (profiler.measure), median of up to
20 calls, 3 rounds with the order rotated (the best taken), XLA command buffers off (the knob is re-read at every
launch); bytes = x read once + y written once; % of the copy ceiling measured in the same process. Error: max |y -
ref| / max(1, |ref|) against float64 NumPy over 8 rows.

  python bench/lab/s32_window_lab.py [--cols 97,1001,...] [--out FILE]
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
os.environ.pop("JK_NORM_WINDOW", None)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import jax_kernels as jk  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from norm_half_lab import lab_inputs, lab_start, rel_error, rotated_rounds  # noqa: E402
from s31_lean_lab import jnp_norm, ours  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
DT = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16}
COLS = [97, 1001, 2035, 4099, 10001, 16381]
VARIANTS = {"win": None, "old": "0", "jnp": None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cols", default=",".join(map(str, COLS)))
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"), "s32_window_lab.txt"))
    a = ap.parse_args()
    measure, say, ceiling = lab_start(a.out)
    rows = 49152 if ON_GPU else 5
    for n in [int(c) for c in a.cols.split(",")] if ON_GPU else [97, 1001]:
        for dname, dt in DT.items():
            x, s, b = lab_inputs((rows, n), dt)
            nbytes = 2 * x.nbytes
            for op in ("layer_norm", "rms_norm"):
                fns = {"win": ours(op), "old": ours(op), "jnp": jnp_norm(op)}

                def use(v):
                    os.environ.pop("JK_NORM_WINDOW", None)
                    if VARIANTS[v] is not None:
                        os.environ["JK_NORM_WINDOW"] = VARIANTS[v]
                    return fns[v]
                errs = {v: rel_error(x[:8], jax.block_until_ready(use(v)(x, s, b))[:8], s, b, op) for v in ("win", "old")}
                times = rotated_rounds(measure, use, list(VARIANTS), (x, s, b), max(3, min(20, int(30e9 // x.nbytes))))
                best = {v: min(t) for v, t in times.items()}
                pct = {v: nbytes / (best[v] * 1e-3) / 1e9 / ceiling * 100 for v in best}
                say(f"{op:10s} {dname:4s} {rows}x{n:<6d} " +
                    " ".join(f"{v} {best[v] * 1e3:9.1f} us ({pct[v]:5.1f}%)" for v in VARIANTS) +
                    f"; x jnp win {best['jnp'] / best['win']:.2f} old {best['jnp'] / best['old']:.2f}; err " +
                    " / ".join(f"{v} {errs[v]:.1e}" for v in errs))
            del x
    os.environ.pop("JK_NORM_WINDOW", None)


if __name__ == "__main__":
    main()
