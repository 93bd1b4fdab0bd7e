"""Session 32: softmax / log_softmax on rows of n % P != 0 against jnp, in ONE process: does softmax share the norms'
odd-row gap (norm_window.cuh)? First run (call 9): the scalar kVec = 1 kernels only; then (call 10) "win" (the window
tier, softmax_window.cuh, the default past 1024 columns; JK_SOFTMAX_WINDOW=1 forces it below) against "old"
(JK_SOFTMAX_WINDOW=0). Method as s32_window_lab.py (CUPTI kernel time, median of up to 20 calls, 3 rotated rounds,
the best taken, XLA command buffers off; % of the copy ceiling measured in the same process).

  python bench/lab/s32_odd_softmax_lab.py [--out FILE]
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
os.environ.pop("JK_SOFTMAX_WINDOW", None)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from norm_half_lab import lab_start, rotated_rounds  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
CASES = [(49152, 97), (49152, 1001), (49152, 1537), (49152, 2051), (49152, 4099), (49152, 16381), (8192, 50257)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"), "s32_odd_softmax_lab.txt"))
    a = ap.parse_args()
    measure, say, ceiling = lab_start(a.out)
    for rows, n in CASES if ON_GPU else [(5, 97), (3, 1001)]:
        for dt in (jnp.float32, jnp.bfloat16):
            x = jax.random.normal(jax.random.key(n), (rows, n), jnp.float32).astype(dt)
            nbytes = 2 * x.nbytes
            for name, f_ours, f_ref in [("softmax", jk.softmax, jax.nn.softmax),
                                        ("log_softmax", jk.log_softmax, jax.nn.log_softmax)]:
                fns = {"win": jax.jit(f_ours), "old": jax.jit(f_ours), "jnp": jax.jit(f_ref)}

                def use(v):
                    os.environ["JK_SOFTMAX_WINDOW"] = "0" if v == "old" else "1"
                    return fns[v]
                want = fns["jnp"](x).astype(jnp.float32)
                err = {v: float(jnp.max(jnp.abs(use(v)(x).astype(jnp.float32) - want))) for v in ("win", "old")}
                times = rotated_rounds(measure, use, ["win", "old", "jnp"], (x,), max(3, min(20, int(30e9 // x.nbytes))))
                best = {v: min(t) for v, t in times.items()}
                pct = {v: nbytes / (best[v] * 1e-3) / 1e9 / ceiling * 100 for v in best}
                say(f"{name:11s} {np.dtype(dt).name:8s} {rows}x{n:<6d} " +
                    " ".join(f"{v} {best[v] * 1e3:8.1f} us ({pct[v]:5.1f}%)" for v in best) +
                    f"; x jnp win {best['jnp'] / best['win']:.2f} old {best['jnp'] / best['old']:.2f}; max diff " +
                    " / ".join(f"{v} {err[v]:.1e}" for v in err))
            del x
    os.environ.pop("JK_SOFTMAX_WINDOW", None)


if __name__ == "__main__":
    main()
