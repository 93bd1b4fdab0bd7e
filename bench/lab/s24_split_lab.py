"""Session 24: SplitPipe (cuda/matmul/matmul_decode_split.cuh: XLA's decode geometry, split-K over 128-column CTAs
without a cluster, float32 partials in the lowering's workspace, a sum + epilogue kernel) against SkinnyPipe (the
cluster form, JK_MATMUL_DECODE=cluster) and forced rank counts. bench/lab/matmul_small_s4_lab.py's method: CUPTI
(the sum of both kernels' times, as for XLA's own gemm + reduction), median of 20 calls, jnp in one process, XLA
command buffers off.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s24_split_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

S = {"JK_MATMUL_DECODE": "split"}
lab.VARIANTS.update({
    "cluster": {"JK_MATMUL_DECODE": "cluster"},
    "split": S,
    "r4": {**S, "JK_MATMUL_SPLIT_RANKS": "4"},
    "r8": {**S, "JK_MATMUL_SPLIT_RANKS": "8"},
    "r16": {**S, "JK_MATMUL_SPLIT_RANKS": "16"},
})
V = ("cluster", "r16")
lab.CASES = [
    ("bf16 8x4096x4096 (L2)", jnp.bfloat16, (8, 4096, 4096), "mm", None, V),
    ("f16 8x4096x4096 (L2)", jnp.float16, (8, 4096, 4096), "mm", None, V),
    ("bf16 16x4096x4096", jnp.bfloat16, (16, 4096, 4096), "mm", None, V),
    ("bf16 4x4096x4096", jnp.bfloat16, (4, 4096, 4096), "mm", None, V),
    ("bf16 2x4096x4096", jnp.bfloat16, (2, 4096, 4096), "mm", None, V),
    ("bf16 1x4096x4096", jnp.bfloat16, (1, 4096, 4096), "mm", None, ("split",) + V),
    ("bf16 8x2048x2048", jnp.bfloat16, (8, 2048, 2048), "mm", None, V),
    ("bf16 8x1024x1024", jnp.bfloat16, (8, 1024, 1024), "mm", None, V),
    ("bf16 8x4096x11008", jnp.bfloat16, (8, 4096, 11008), "mm", None, V),
    ("bf16 8x11008x4096", jnp.bfloat16, (8, 11008, 4096), "mm", None, ("split", "r2") + V),
    ("bf16 8x4096x14336 (DRAM)", jnp.bfloat16, (8, 4096, 14336), "mm", None, V),
    ("bf16 8x14336x4096 (DRAM)", jnp.bfloat16, (8, 14336, 4096), "mm", None, ("split", "r2") + V),
    ("linear bf16 8x4096x4096 bias+gelu", jnp.bfloat16, (8, 4096, 4096), "lin", None, V),
]
lab.VARIANTS["r2"] = {**S, "JK_MATMUL_SPLIT_RANKS": "2"}
if __name__ == "__main__":
    lab.main()
