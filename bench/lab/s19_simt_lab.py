"""Session 19: the exact float32 split-K kernel with k-tiles held in registers ahead of the math
(JK_MATMUL_SIMT_DEPTH=2|4; 1 = the next k-tile only, the default), against the default and jnp in one process
(bench/lab/matmul_small_s4_lab.py's method: CUPTI, median of 20 calls, XLA command buffers off).

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s19_simt_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

HI = jax.lax.Precision.HIGHEST
lab.VARIANTS.update({
    "d2": {"JK_MATMUL_SIMT_DEPTH": "2"},
    "d4": {"JK_MATMUL_SIMT_DEPTH": "4"},
    "ours2": {},
    "d2b": {"JK_MATMUL_SIMT_DEPTH": "2"},
    "d4b": {"JK_MATMUL_SIMT_DEPTH": "4"},
})
V = ("d2", "d4", "ours2", "d2b", "d4b")
lab.CASES = [
    ("f32 HIGHEST 512x512x256", jnp.float32, (512, 512, 256), "mm", HI, V),
    ("f32 HIGHEST 512^3", jnp.float32, (512, 512, 512), "mm", HI, V),
    ("f32 HIGHEST 384^3", jnp.float32, (384, 384, 384), "mm", HI, V),
    ("f32 HIGHEST 256^3", jnp.float32, (256, 256, 256), "mm", HI, V),
    ("f32 HIGHEST 256x512x1024", jnp.float32, (256, 512, 1024), "mm", HI, V),
]
if __name__ == "__main__":
    lab.main()
