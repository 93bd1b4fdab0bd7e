"""Session 23, calls 2-3 (lab builds: JK_MATMUL_SIMT_RING_CFG existed in commits 1d6e6d1-8d8c2ca only;
the final rule is in LaunchSimtRing) (call 3: the copies' source pointers run along K instead of being recomputed; t32 = 32x32
tiles of 64 threads, 16 outputs a thread). Call 2: SimtRing's k-tile depth and ring length on the 16x32 tile (forced, JK_MATMUL_SIMT=ring16) for
exact float32 small problems. XLA's Triton config for 512x512x256 (read from --xla_dump_to in call 1): 16x32
output tiles, block_k 64, num_stages 3 (2 shared-memory buffers), 2 warps. The default ring is 32-deep x 4 stages.
bench/lab/matmul_small_s4_lab.py's method: CUPTI, median of 20 calls, jnp in one process, XLA command buffers off.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s23_ring_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

HI = jax.lax.Precision.HIGHEST
CFGS = ("32x4", "64x3", "32x3", "16x4", "16x8", "t32")
lab.VARIANTS.update({"ours2": {}})
lab.VARIANTS.update({c: {"JK_MATMUL_SIMT": "ring16", "JK_MATMUL_SIMT_RING_CFG": c} for c in CFGS})
V = ("ours2",) + CFGS
lab.CASES = [(f"f32 HIGHEST {m}x{n}x{k}", jnp.float32, (m, n, k), "mm", HI, V) for m, n, k in [
    (512, 512, 256), (256, 256, 256), (128, 128, 128), (384, 256, 256), (256, 512, 1024), (32, 2048, 2048),
    (1000, 100, 100), (512, 512, 512)]]
if __name__ == "__main__":
    lab.main()
