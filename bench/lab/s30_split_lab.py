"""Session 30: the split-axis tier for long non-last axes (cuda/norm/norm_split.cuh) against the previous default
(JK_STRIDED_SPLIT=0: the register tile in a cluster, or the scalar kernel past 8 x 4096 rows) and jnp, in ONE process.

Variants: "split" (the default), "plain" (JK_SPLIT_STREAM=0: apply passes without evict-first loads / stores),
"before" (JK_STRIDED_SPLIT=0), jnp. Method as strided_lab.py: CUPTI kernel time per call (profiler.measure: the sum of all kernels of a call, so the
split tier's three launches count), median of 20 calls, 3 rounds with the order rotated (reported: every round's
median); bytes = x read once + y written once; % of the copy ceiling measured in the same process. Error: max
|y - ref| / max(1, |ref|) against float64 NumPy over two slabs.

  python bench/lab/s30_split_lab.py [--quick] [--out FILE]
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
os.environ["JK_STRIDED_TILE_DYNAMIC"] = "1"
os.environ.pop("JK_STRIDED_TILE", None)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from norm_half_lab import lab_inputs, lab_start, rotated_rounds  # noqa: E402
from strided_lab import err, make  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
DT = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16}
# (shape, dtype): the long-axis case of strided_h200.md first, then BatchNorm-like axis-0 statistics of (N, C)
# activations (outer 1), wider columns, and an axis just past the split threshold.
CASES = [((4, 32768, 128), "bf16"), ((4, 32768, 128), "f32"), ((1, 65536, 256), "bf16"), ((1, 65536, 256), "f32"),
         ((1, 262144, 64), "bf16"), ((2, 16384, 512), "bf16"), ((8, 8192, 256), "f16"), ((16, 4608, 128), "bf16"),
         ((1, 1048576, 32), "f32"), ((64, 2048, 1024), "bf16")]  # the last: the register tile (refactored), not split


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"), "s30_split_lab.txt"))
    a = ap.parse_args()
    measure, say, ceiling = lab_start(a.out)
    cases = CASES if ON_GPU and not a.quick else [((2, 4200, 16), "bf16"), ((1, 5000, 8), "f32")]
    say(f"{'case':36s} {'split':>8s} {'plain':>8s} {'before':>8s} {'jnp':>8s}  ms; x jnp, % copy (split); max err; rounds")
    for shape, dname in cases:
        x, s, b = lab_inputs(shape, DT[dname])
        nbytes = 2 * x.nbytes
        for op in ("layer_norm", "rms_norm", "softmax"):
            ours, theirs = make(op, False)
            # (JK_STRIDED_SPLIT, JK_SPLIT_STREAM, function): "plain" is the split tier without evict-first apply passes
            variants = {"split": ("1", "1", ours), "plain": ("1", "0", ours), "before": ("0", "1", ours),
                        "jnp": ("1", "1", theirs)}

            def use(v):
                os.environ["JK_STRIDED_SPLIT"], os.environ["JK_SPLIT_STREAM"] = variants[v][:2]
                return variants[v][2]
            errs = {}
            for v in variants:
                f = use(v)
                jax.block_until_ready(f(x, s, b))
                if v != "jnp":
                    errs[v] = err(op, f, x, s, b, False)
            times = rotated_rounds(measure, use, variants, (x, s, b), 20)
            best = {v: min(t) for v, t in times.items()}
            name = f"{op} {dname} {'x'.join(map(str, shape))}"
            say(f"{name:36s} {best['split']:8.4f} {best['plain']:8.4f} {best['before']:8.4f} {best['jnp']:8.4f}  "
                f"{best['jnp'] / best['split']:.2f}x (plain {best['jnp'] / best['plain']:.2f}x, "
                f"before {best['jnp'] / best['before']:.2f}x), "
                f"{nbytes / (best['split'] * 1e-3) / 1e9 / ceiling * 100:.0f}% copy; err {errs['split']:.1e} / "
                f"{errs['before']:.1e}; rounds " + " | ".join(" ".join(f"{t:.4f}" for t in times[v]) for v in times))
        del x
    os.environ.pop("JK_STRIDED_SPLIT", None)
    os.environ.pop("JK_SPLIT_STREAM", None)


if __name__ == "__main__":
    main()
