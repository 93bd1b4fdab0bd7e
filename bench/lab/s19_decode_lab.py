"""Session 19: SkinnyMma (b's mma fragments straight from global memory, no shared-memory ring) with a chosen
cluster size and software-pipelined rounds, against SkinnyPipe (the default) and jnp, in one process
(bench/lab/matmul_small_s4_lab.py's method: CUPTI, median of 20 calls, XLA command buffers off so the launcher's
environment is read at every launch).

Variants: mma = SkinnyMma as committed (its own cluster rule: clusters of 8 at N = 4096); mmaN = clusters of N;
pRcN = rounds of R k steps, the next round's loads issued before this one's mma (JK_MATMUL_SKINNY_PIPELINED=R),
clusters of N.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s19_decode_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

M = {"JK_MATMUL_SKINNY": "mma"}
lab.VARIANTS.update({
    "mma": dict(M),
    "mma2": {**M, "JK_MATMUL_SKINNY_CLUSTER": "2"},
    "mma4": {**M, "JK_MATMUL_SKINNY_CLUSTER": "4"},
    "p2c1": {**M, "JK_MATMUL_SKINNY_PIPELINED": "2", "JK_MATMUL_SKINNY_CLUSTER": "1"},
    "p2c2": {**M, "JK_MATMUL_SKINNY_PIPELINED": "2", "JK_MATMUL_SKINNY_CLUSTER": "2"},
    "p2c4": {**M, "JK_MATMUL_SKINNY_PIPELINED": "2", "JK_MATMUL_SKINNY_CLUSTER": "4"},
    "p1c2": {**M, "JK_MATMUL_SKINNY_PIPELINED": "1", "JK_MATMUL_SKINNY_CLUSTER": "2"},
    "p1c4": {**M, "JK_MATMUL_SKINNY_PIPELINED": "1", "JK_MATMUL_SKINNY_CLUSTER": "4"},
})
V = ("mma", "mma2", "mma4", "p2c1", "p2c2", "p2c4", "p1c2", "p1c4")
lab.CASES = [
    ("bf16 8x4096x4096 (L2)", jnp.bfloat16, (8, 4096, 4096), "mm", None, V),
    ("f16 8x4096x4096 (L2)", jnp.float16, (8, 4096, 4096), "mm", None, V),
    ("bf16 4x4096x4096 (L2)", jnp.bfloat16, (4, 4096, 4096), "mm", None, V),
    ("bf16 8x4096x14336 (DRAM)", jnp.bfloat16, (8, 4096, 14336), "mm", None, V),
    ("bf16 8x14336x4096 (DRAM)", jnp.bfloat16, (8, 14336, 4096), "mm", None, V),
    ("bf16 8x2048x2048", jnp.bfloat16, (8, 2048, 2048), "mm", None, V),
]
if __name__ == "__main__":
    lab.main()
