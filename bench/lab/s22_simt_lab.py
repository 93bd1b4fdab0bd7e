"""Session 22: exact float32 on SimtPanel (the whole K panel of a tile copied to shared memory at once; the default,
on 16x32 tiles of 64 threads, below one wave of 64x64 tiles with K <= 512; call 3 timed the 32x64 tile in two k
groups, now panel32) against the double-buffered kernels it replaces there (JK_MATMUL_SIMT=nopanel: split-K
clusters or the 32x64 tile) and, past one wave, forced (JK_MATMUL_SIMT=panel16 / panel32),
against jnp in one process (bench/lab/matmul_small_s4_lab.py's method: CUPTI, median of 20 calls, XLA command
buffers off).

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s22_simt_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

HI = jax.lax.Precision.HIGHEST
lab.VARIANTS.update({"nopanel": {"JK_MATMUL_SIMT": "nopanel"}, "panel16": {"JK_MATMUL_SIMT": "panel16"},
                     "panel32": {"JK_MATMUL_SIMT": "panel32"}, "ours2": {}})
V = ("nopanel", "panel32", "ours2")
F = ("nopanel", "panel16", "panel32")
lab.CASES = [
    ("f32 HIGHEST 512x512x256", jnp.float32, (512, 512, 256), "mm", HI, V),
    ("f32 HIGHEST 512^3", jnp.float32, (512, 512, 512), "mm", HI, V),
    ("f32 HIGHEST 384^3", jnp.float32, (384, 384, 384), "mm", HI, V),
    ("f32 HIGHEST 256^3", jnp.float32, (256, 256, 256), "mm", HI, V),
    ("f32 HIGHEST 128^3", jnp.float32, (128, 128, 128), "mm", HI, V),
    ("f32 HIGHEST 256x1024x512", jnp.float32, (256, 1024, 512), "mm", HI, V),
    ("f32 HIGHEST 1000x100x100", jnp.float32, (1000, 100, 100), "mm", HI, V),
    ("f32 HIGHEST 1024x1024x256", jnp.float32, (1024, 1024, 256), "mm", HI, F),
    ("f32 HIGHEST 768x768x512", jnp.float32, (768, 768, 512), "mm", HI, F),
]
if __name__ == "__main__":
    lab.main()
