"""Session 20 (not run: no device time was left): SkinnyPipe's ranks pushing their partial sums into the owning rank's shared memory (the
default now) against the two-cluster-barrier exchange (JK_MATMUL_PIPE_PUSH=0), against jnp. Method as
bench/lab/matmul_small_s4_lab.py (CUPTI, median of 20 calls, one process, XLA command buffers off); each variant
twice, alternating. Needs bench/lab/s20_push.patch applied (the push reduction, JK_MATMUL_PIPE_PUSH, test variants).

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s20_push_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

lab.VARIANTS.update({"nopush": {"JK_MATMUL_PIPE_PUSH": "0"}, "push_again": {},
                     "nopush_again": {"JK_MATMUL_PIPE_PUSH": "0"}})
V = ("nopush", "push_again", "nopush_again")
B = jnp.bfloat16
lab.CASES = [
    ("bf16 8x4096x4096 (L2)", B, (8, 4096, 4096), "mm", None, V),
    ("f16 8x4096x4096 (L2)", jnp.float16, (8, 4096, 4096), "mm", None, V),
    ("bf16 16x4096x4096", B, (16, 4096, 4096), "mm", None, V),
    ("bf16 4x4096x4096", B, (4, 4096, 4096), "mm", None, V),
    ("bf16 8x2048x2048", B, (8, 2048, 2048), "mm", None, V),
    ("bf16 8x4096x14336 (DRAM)", B, (8, 4096, 14336), "mm", None, V),
    ("bf16 8x14336x4096 (DRAM)", B, (8, 14336, 4096), "mm", None, V),
]
if __name__ == "__main__":
    lab.main()
