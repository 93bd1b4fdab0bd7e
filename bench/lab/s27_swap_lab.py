"""Session 27: the swapped-role wgmma kernel (matmul_wgmma_swap.cuh: C^T tiles of 144 rows x 64 columns, clusters
of 4 sharing a's rows; JK_MATMUL_WGMMA_SWAP=1) against the default dispatch and jnp. "swap2" repeats "swap" last
(drift). bench/lab/matmul_small_s4_lab.py's method: CUPTI, median of 20 calls, jnp in one process, XLA command
buffers off; err against float64 over up to 96 rows.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s27_swap_lab.py [filter]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

lab.VARIANTS.update({"swap": {"JK_MATMUL_WGMMA_SWAP": "1"}, "noswap": {"JK_MATMUL_WGMMA_SWAP": "0"},
                     "swap2": {"JK_MATMUL_WGMMA_SWAP": "1"}})
V = ("noswap", "swap", "swap2")
lab.CASES = [(f"bf16 {m}x{n}x{k}", jnp.bfloat16, (m, n, k), "mm", None, V) for m, n, k in [
    (1000, 1000, 1000), (1000, 1008, 1000), (1024, 1024, 1000), (1024, 1024, 1024), (768, 768, 768),
    (512, 1000, 1000), (1000, 1000, 4000), (2000, 2000, 2000), (3000, 3000, 3000), (4096, 4096, 4096),
    (1000, 1000, 256), (8192, 1000, 1000)]]
lab.CASES.insert(1, ("f16 1000x1000x1000", jnp.float16, (1000, 1000, 1000), "mm", None, V))
if __name__ == "__main__":
    lab.main()
