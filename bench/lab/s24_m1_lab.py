"""Session 24: SplitPipe at M = 1 (SkinnyM's problems before; "ours" is the default dispatch) and rank counts where N
has 16 column blocks. bench/lab/matmul_small_s4_lab.py's method: CUPTI, median of 20 calls, jnp in one process, XLA
command buffers off.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s24_m1_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

S = {"JK_MATMUL_DECODE": "split"}
lab.VARIANTS.update({
    "skinnym": {"JK_MATMUL_DECODE": "cluster"},  # M = 1: SkinnyM; M >= 2: SkinnyPipe
    "r4": {**S, "JK_MATMUL_SPLIT_RANKS": "4"},
    "r8": {**S, "JK_MATMUL_SPLIT_RANKS": "8"},
    "r16": {**S, "JK_MATMUL_SPLIT_RANKS": "16"},
})
V = ("skinnym", "r8", "r16")
lab.CASES = [
    ("bf16 8x4096x4096 (L2)", jnp.bfloat16, (8, 4096, 4096), "mm", None, V),
    ("bf16 16x4096x4096", jnp.bfloat16, (16, 4096, 4096), "mm", None, V),
    ("bf16 1x4096x4096", jnp.bfloat16, (1, 4096, 4096), "mm", None, V),
    ("f16 1x4096x4096", jnp.float16, (1, 4096, 4096), "mm", None, V),
    ("bf16 1x2048x2048", jnp.bfloat16, (1, 2048, 2048), "mm", None, V),
    ("bf16 1x1024x4096", jnp.bfloat16, (1, 1024, 4096), "mm", None, V),
    ("bf16 1x4096x1024", jnp.bfloat16, (1, 4096, 1024), "mm", None, V),
    ("bf16 1x14336x4096", jnp.bfloat16, (1, 14336, 4096), "mm", None, V),
    ("bf16 8x2048x2048", jnp.bfloat16, (8, 2048, 2048), "mm", None, ("r4",) + V),
    ("bf16 8x1024x1024", jnp.bfloat16, (8, 1024, 1024), "mm", None, ("r4",) + V),
    ("linear bf16 8x4096x4096 bias+gelu", jnp.bfloat16, (8, 4096, 4096), "lin", None, V),
    ("linear bf16 1x4096x4096 bias+gelu", jnp.bfloat16, (1, 4096, 4096), "lin", None, V),
]
if __name__ == "__main__":
    lab.main()
