"""Session 21, call 2 (needs bench/lab/s21_warp_ring.patch applied; not kept): SkinnyPipe's per-warp ring (JK_MATMUL_PIPE_WARP=1|2|3: 16 k rows x 8 stages, 32 x 4, 16 x 4 a warp)
against the CTA-wide ring (the default), against jnp. Method as bench/lab/matmul_small_s4_lab.py (CUPTI, median of
20 calls, one process, XLA command buffers off); each variant twice, alternating.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s21_warp_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

lab.VARIANTS.update({"w1": {"JK_MATMUL_PIPE_WARP": "1"}, "w2": {"JK_MATMUL_PIPE_WARP": "2"},
                     "w3": {"JK_MATMUL_PIPE_WARP": "3"}, "ours_again": {},
                     "w1_again": {"JK_MATMUL_PIPE_WARP": "1"}, "w2_again": {"JK_MATMUL_PIPE_WARP": "2"},
                     "w3_again": {"JK_MATMUL_PIPE_WARP": "3"}})
V = ("w1", "w2", "w3", "ours_again", "w1_again", "w2_again", "w3_again")
B = jnp.bfloat16
lab.CASES = [
    ("bf16 8x4096x4096 (L2)", B, (8, 4096, 4096), "mm", None, V),
    ("f16 8x4096x4096 (L2)", jnp.float16, (8, 4096, 4096), "mm", None, V),
    ("bf16 16x4096x4096", B, (16, 4096, 4096), "mm", None, V),
    ("bf16 4x4096x4096", B, (4, 4096, 4096), "mm", None, V),
    ("bf16 8x2048x2048", B, (8, 2048, 2048), "mm", None, V),
    ("bf16 8x4096x11008", B, (8, 4096, 11008), "mm", None, V),
]
if __name__ == "__main__":
    lab.main()
