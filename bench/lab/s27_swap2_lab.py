"""Session 27, call 2: the swapped-role kernel's default rule (one wave of clusters, K >= 512, K or N % 16 != 0)
at the edges of its K threshold and cluster count. "ours" is the default dispatch with the rule; "noswap"
(JK_MATMUL_WGMMA_SWAP=0) the dispatch before it; "swap" forces it. Method as s27_swap_lab.py.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s27_swap2_lab.py [filter]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

lab.VARIANTS.update({"swap": {"JK_MATMUL_WGMMA_SWAP": "1"}, "noswap": {"JK_MATMUL_WGMMA_SWAP": "0"}})
V = ("noswap", "swap")
lab.CASES = [(f"bf16 {m}x{n}x{k}", jnp.bfloat16, (m, n, k), "mm", None, V) for m, n, k in [
    (1000, 1000, 1000), (1000, 1000, 512), (1000, 1000, 768), (768, 1000, 768), (2000, 512, 1000),
    (1000, 1000, 2000), (2000, 1000, 1000), (1000, 2000, 1000), (256, 1000, 1000), (1000, 1024, 1000),
    (1000, 1000, 8000), (4, 1000, 1000)]]
lab.CASES.insert(1, ("f16 1000x1000x1000", jnp.float16, (1000, 1000, 1000), "mm", None, V))
if __name__ == "__main__":
    lab.main()
