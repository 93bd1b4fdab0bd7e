"""Session 23, call 4 (JK_MATMUL_WGMMA_MC=4 and JK_MATMUL_SIMT_RING_CFG existed in that call's build only; the
clusters of 4 are in bench/lab/s23_quad.patch): bf16 / f16 problems on 128x64 wgmma tiles (one wave of them, the 1000^3 family) alone, in multicast
pairs sharing a (JK_MATMUL_WGMMA_MC=1), and in clusters of 2 x 2 tiles sharing a along rows and b along columns
(JK_MATMUL_WGMMA_MC=4, kMcShareAB). cuBLAS's kernel for 1000^3 runs 64x144 tiles in clusters of 4 and reads 30 MB
from L2 against our pairs' 47 (bench/lab/s22_h200.md call 4). S23_LAB=ring adds SimtRing's k-tile shapes again.
bench/lab/matmul_small_s4_lab.py's method: CUPTI, median of 20 calls, jnp in one process, XLA command buffers off.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s23_quad_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

HI = jax.lax.Precision.HIGHEST
W = {"JK_MATMUL_WGMMA": "64"}
lab.VARIANTS.update({"ours2": {}, "alone": {**W, "JK_MATMUL_WGMMA_MC": "0"}, "pairs": {**W, "JK_MATMUL_WGMMA_MC": "1"},
                     "quad": {**W, "JK_MATMUL_WGMMA_MC": "4"}, "quad2": {**W, "JK_MATMUL_WGMMA_MC": "4"}})
V = ("ours2", "alone", "pairs", "quad", "quad2")
lab.CASES = [(f"{'bf16' if dt == jnp.bfloat16 else 'f16'} {m}x{n}x{k}", dt, (m, n, k), "mm", None, V)
             for dt, m, n, k in [
                 (jnp.bfloat16, 1000, 1000, 1000), (jnp.float16, 1000, 1000, 1000), (jnp.bfloat16, 1024, 1024, 1024),
                 (jnp.bfloat16, 1000, 1008, 1000), (jnp.bfloat16, 512, 1000, 1000), (jnp.bfloat16, 1000, 1000, 4000),
                 (jnp.bfloat16, 1024, 1024, 1000), (jnp.bfloat16, 768, 768, 768), (jnp.bfloat16, 2048, 1024, 1024),
                 (jnp.bfloat16, 2000, 2000, 2000), (jnp.bfloat16, 777, 1000, 1003)]]
if os.environ.get("S23_LAB") == "ring":
    R = ("ours2",) + tuple(f"r{c}" for c in ("32x4", "32x3", "16x8"))
    lab.VARIANTS.update({f"r{c}": {"JK_MATMUL_SIMT": "ring16", "JK_MATMUL_SIMT_RING_CFG": c}
                         for c in ("32x4", "32x3", "16x8")})
    lab.CASES += [(f"f32 HIGHEST {m}x{n}x{k}", jnp.float32, (m, n, k), "mm", HI, R) for m, n, k in [
        (512, 512, 256), (256, 256, 256), (128, 128, 128), (384, 256, 256), (256, 512, 1024), (32, 2048, 2048),
        (1000, 100, 100), (100, 300, 200), (2000, 64, 48), (64, 64, 64)]]
if __name__ == "__main__":
    lab.main()
