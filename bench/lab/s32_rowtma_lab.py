"""Session 32: the transpose's short row copies as tensor-map boxes (JK_TRANSPOSE_TIERS=rowtma / rowtma16,
cuda/transpose/transpose_bulk_kernels.cuh RowCopyTensor) against the default row copy and jnp, in ONE process.

Cases: permutations that keep the last axis with runs of 64-256 bytes, the issue's attention permute among them.
Method as s31_lean_lab.py (norm_half_lab.py's helpers): CUPTI kernel time per call (profiler.measure), median of 20
calls, 3 rounds with the order rotated (every round's median reported, the best taken), XLA command buffers off (the
launcher re-reads the knob at every launch); bytes = input read once + output written once; % of the copy ceiling
(x * c over 1 GiB float32) measured in the same process. Every setting's output is checked equal to jnp's.

  python bench/lab/s32_rowtma_lab.py [--out FILE]
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
os.environ.pop("JK_TRANSPOSE_TIERS", None)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from norm_half_lab import lab_start, rotated_rounds  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
CASES = [((32, 128, 64, 64), jnp.bfloat16, (0, 2, 1, 3)),   # the attention permute: 128-byte runs
         ((16, 2048, 16, 128), jnp.bfloat16, (0, 2, 1, 3)),  # (B, S, H, D) -> (B, H, S, D): 256-byte runs
         ((8, 32, 2048, 64), jnp.float16, (0, 2, 1, 3)),     # and back, 128-byte runs, 67 MB
         ((64, 512, 32, 16), jnp.float32, (0, 2, 1, 3)),     # 64-byte runs
         ((256, 1024, 8), jnp.float32, (1, 0, 2))]           # 32-byte runs, rank 3
QUICK = [((2, 8, 16, 64), jnp.bfloat16, (0, 2, 1, 3)), ((3, 5, 7, 16), jnp.float32, (0, 2, 1, 3))]
VARIANTS = {"def": "", "rowtma": "rowtma", "rowtma16": "rowtma16"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"), "s32_rowtma_lab.txt"))
    a = ap.parse_args()
    measure, say, ceiling = lab_start(a.out)
    for shape, dt, perm in CASES if ON_GPU else QUICK:
        x = jax.random.normal(jax.random.key(len(shape)), shape, jnp.float32).astype(dt)
        nbytes = 2 * x.nbytes
        ours = jax.jit(lambda v, p=perm: jk.transpose(v, p))
        ref = jax.jit(lambda v, p=perm: jnp.transpose(v, p))

        def use(v):
            if v == "jnp":
                return ref
            os.environ["JK_TRANSPOSE_TIERS"] = VARIANTS[v]
            return ours
        variants = list(VARIANTS) + ["jnp"]
        want = np.asarray(ref(x))
        ok = {v: bool(np.array_equal(np.asarray(use(v)(x)), want)) for v in VARIANTS}
        times = rotated_rounds(measure, use, variants, (x,), 20)
        best = {v: min(t) for v, t in times.items()}
        pct = {v: nbytes / (best[v] * 1e-3) / 1e9 / ceiling * 100 for v in best}
        name = f"{'x'.join(map(str, shape))} {perm} {np.dtype(dt).name}"
        say(f"{name:38s} " + " ".join(f"{v} {best[v] * 1e3:.2f} us ({pct[v]:.1f}%)" for v in variants) +
            f"; x jnp " + " ".join(f"{v} {best['jnp'] / best[v]:.3f}" for v in VARIANTS) +
            "; equal " + " ".join(f"{v} {ok[v]}" for v in ok) + "; rounds " +
            " | ".join(" ".join(f"{t * 1e3:.2f}" for t in times[v]) for v in variants))
    os.environ.pop("JK_TRANSPOSE_TIERS", None)


if __name__ == "__main__":
    main()
