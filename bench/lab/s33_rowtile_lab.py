"""Session 33: the transpose's short row copies as tiles staged in shared memory (JK_TRANSPOSE_TIERS=rowtile4k /
rowtile8k / rowtile16k, and rowtile8k with the A-fastest tile order; cuda/transpose/transpose_rowtile_kernels.cuh
RowTileCopy) against the default row copy (input order) and jnp, in ONE process.

Cases: permutations that keep the last axis with runs of 16-128 bytes (the tier's range; 32 and 64 bytes are its
targets), the issue's attention permute among them, and 256-byte runs as a control (the tier does not apply: every
variant runs the default). Method as s32_rowtma_lab.py (norm_half_lab.py's helpers): CUPTI kernel time per call
(profiler.measure), median of 20 calls, 3 rounds with the order rotated (every round's median reported, the best
taken), XLA command buffers off (the launcher re-reads the knob at every launch); bytes = input read once + output
written once; % of the copy ceiling (x * c over 1 GiB float32) measured in the same process. Every setting's output is
checked equal to jnp's (on the device). On a CPU it runs two small cases only (the script's check).

  python bench/lab/s33_rowtile_lab.py [--out FILE] [--variants def,rowtile8k,jnp] [--no-large] [--only 0,4]
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
CASES = [((256, 1024, 8), jnp.float32, (1, 0, 2)),         # 32-byte runs, 8 MB (L2-resident): 0.66x jnp
         ((1024, 256, 8), jnp.float32, (1, 0, 2)),         # 32-byte runs, the other aspect
         ((512, 512, 4), jnp.float32, (1, 0, 2)),          # 16-byte runs
         ((64, 512, 32, 16), jnp.float32, (0, 2, 1, 3)),   # 64-byte runs, 67 MB: 0.998x jnp
         ((32, 128, 64, 64), jnp.bfloat16, (0, 2, 1, 3)),  # the attention permute: 128-byte runs, 87.7%
         ((16, 2048, 16, 128), jnp.bfloat16, (0, 2, 1, 3)),  # 256-byte runs: the tier does not apply (control)
         ((8, 32, 2048, 64), jnp.float16, (0, 2, 1, 3)),   # (B, H, S, D) -> (B, S, H, D), 128-byte runs
         ((2048, 2048, 16), jnp.bfloat16, (1, 0, 2))]      # 32-byte runs, 128 MB
LARGE = [((4096, 4096, 16), jnp.bfloat16, (1, 0, 2))]      # 32-byte runs, 512 MB (--no-large drops it)
QUICK = [((2, 8, 16, 64), jnp.bfloat16, (0, 2, 1, 3)), ((3, 33, 8), jnp.float32, (1, 0, 2))]
VARIANTS = {"def": "", "rowtile4k": "rowtile4k", "rowtile8k": "rowtile8k", "rowtile16k": "rowtile16k",
            "rowtile8ka": "rowtile8k,rowtilea", "rowtile16ka": "rowtile16k,rowtilea",
            "rowtile8kap": "rowtile8k,rowtilea,rowtilep", "rowtile8kp": "rowtile8k,rowtilep"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"), "s33_rowtile_lab.txt"))
    ap.add_argument("--variants", default=",".join(list(VARIANTS) + ["jnp"]),
                    help="comma-separated, of " + ", ".join(list(VARIANTS) + ["jnp"]))
    ap.add_argument("--no-large", action="store_true", help="skip the 512 MB case")
    ap.add_argument("--only", default="", help="comma-separated case indices (0-based, of CASES + LARGE)")
    a = ap.parse_args()
    variants = a.variants.split(",")
    ours_v = [v for v in variants if v != "jnp"]
    assert all(v in VARIANTS for v in ours_v), variants
    measure, say, ceiling = lab_start(a.out)
    cases = (CASES + ([] if a.no_large else LARGE)) if ON_GPU else QUICK
    if a.only and ON_GPU:
        cases = [cases[int(i)] for i in a.only.split(",")]
    for shape, dt, perm in cases:
        x = jax.random.normal(jax.random.key(len(shape)), shape, jnp.float32).astype(dt)
        nbytes = 2 * x.nbytes
        ours = jax.jit(lambda v, p=perm: jk.transpose(v, p))
        ref = jax.jit(lambda v, p=perm: jnp.transpose(v, p))

        def use(v):
            if v == "jnp":
                return ref
            os.environ["JK_TRANSPOSE_TIERS"] = VARIANTS[v]
            return ours
        want = ref(x)
        ok = {v: bool(jnp.array_equal(use(v)(x), want)) for v in ours_v}
        del want
        times = rotated_rounds(measure, use, variants, (x,), 20)
        best = {v: min(t) for v, t in times.items()}
        pct = {v: nbytes / (best[v] * 1e-3) / 1e9 / ceiling * 100 for v in best}
        run = shape[-1] * np.dtype(dt).itemsize
        name = f"{'x'.join(map(str, shape))} {perm} {np.dtype(dt).name} ({run} B runs)"
        say(f"{name:52s} " + " ".join(f"{v} {best[v] * 1e3:.2f} us ({pct[v]:.1f}%)" for v in variants) +
            ("; x jnp " + " ".join(f"{v} {best['jnp'] / best[v]:.3f}" for v in ours_v) if "jnp" in best else "") +
            "; equal " + " ".join(f"{v} {ok[v]}" for v in ok) + "; rounds " +
            " | ".join(" ".join(f"{t * 1e3:.2f}" for t in times[v]) for v in variants))
        del x
    os.environ.pop("JK_TRANSPOSE_TIERS", None)


if __name__ == "__main__":
    main()
