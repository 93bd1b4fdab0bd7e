"""Session 15 call 14 (a lab build: git apply bench/lab/s15_pipe_lab_flag2.patch on commit e3891a9): SkinnyPipe's
fixed costs at 8x4096x4096. JK_MATMUL_PIPE_LAB bits: 1 skips the ring's copies, 2 the math, 4 the whole epilogue
(partials, cluster reduction, stores), 8 the cluster reduction only (each rank stores a share of its own partials).
Results of the variants are wrong by design. Method as s15_decode_lab.py.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

lab.VARIANTS.update({f"lab{v}": {"JK_MATMUL_PIPE_LAB": str(v)} for v in (3, 4, 7, 8)})
V = ("lab3", "lab7", "lab4", "lab8")
lab.CASES = [
    ("bf16 8x4096x4096 (L2)", jnp.bfloat16, (8, 4096, 4096), "mm", None, V),
    ("bf16 16x4096x4096 (L2)", jnp.bfloat16, (16, 4096, 4096), "mm", None, V),
]
if __name__ == "__main__":
    lab.main()
