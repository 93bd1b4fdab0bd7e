"""Session 15: SkinnyPipe (decode) ring depth and cluster size, against the default and jnp, in one process
(bench/lab/matmul_small_s4_lab.py's method: CUPTI, median of 20 calls, XLA command buffers off so the
launcher's environment is read at every launch). Variants: p64s6 / p64s8 = 64-column CTAs with a 6- / 8-deep
ring (JK_MATMUL_PIPE_STAGES); p64cl1 / p64cl4 = clusters of 1 / 4 K ranks (64 / 256 CTAs at N = 4096).
Call 3 timed all five; call 4 (after the copy index math was hoisted out of the ring) p64s6, p64cl4 and
session 4's p128c1 (128-column CTAs, clusters of 4); call 5 32-column CTAs (p32cN: grid sized for N CTAs per
SM: clusters of 1 / 2 / 4 at N = 4096); call 9 b's stages by the bulk tensor copy engine (tma: JK_MATMUL_PIPE_TMA=1;
tmacl4: with clusters of 4); call 10 the default taking TMA where b is larger than L2 (notma: JK_MATMUL_PIPE_TMA=0).

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s15_decode_lab.py

A record: the 6-deep ring at 64 columns and the 32-column CTAs were lab builds (calls 3-5) and lost; the committed
launcher has neither, so p64s6 / p64s8 / p32cN now run the default geometry (JK_MATMUL_PIPE_STAGES=8 is
honoured at CW = 128 only, JK_MATMUL_PIPE_CW takes 64 / 128 / 256).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

P = {"JK_MATMUL_PIPE": "1", "JK_MATMUL_PIPE_CW": "64"}
lab.VARIANTS.update({
    "p64s6": {**P, "JK_MATMUL_PIPE_STAGES": "6"},
    "p64s8": {**P, "JK_MATMUL_PIPE_STAGES": "8"},
    "p64cl1": {**P, "JK_MATMUL_PIPE_CLUSTER": "1"},
    "p64cl4": {**P, "JK_MATMUL_PIPE_CLUSTER": "4"},
    "p64cl4s6": {**P, "JK_MATMUL_PIPE_CLUSTER": "4", "JK_MATMUL_PIPE_STAGES": "6"},
    "p32c1": {**P, "JK_MATMUL_PIPE_CW": "32"},
    "p32c2": {**P, "JK_MATMUL_PIPE_CW": "32", "JK_MATMUL_PIPE_CTAS_PER_SM": "2"},
    "p32c4": {**P, "JK_MATMUL_PIPE_CW": "32", "JK_MATMUL_PIPE_CTAS_PER_SM": "4"},
    "tma": {**P, "JK_MATMUL_PIPE_TMA": "1"},
    "tmacl4": {**P, "JK_MATMUL_PIPE_TMA": "1", "JK_MATMUL_PIPE_CLUSTER": "4"},
    "notma": {**P, "JK_MATMUL_PIPE_TMA": "0"},
})
V = ("tma", "notma")
lab.CASES = [
    ("bf16 8x4096x4096 (L2)", jnp.bfloat16, (8, 4096, 4096), "mm", None, V),
    ("bf16 16x4096x4096 (L2)", jnp.bfloat16, (16, 4096, 4096), "mm", None, V),
    ("bf16 4x4096x4096 (L2)", jnp.bfloat16, (4, 4096, 4096), "mm", None, V),
    ("f16 8x4096x4096 (L2)", jnp.float16, (8, 4096, 4096), "mm", None, V),
    ("bf16 8x14336x4096 (DRAM)", jnp.bfloat16, (8, 14336, 4096), "mm", None, ("tma", "notma")),
    ("bf16 8x4096x14336 (DRAM)", jnp.bfloat16, (8, 4096, 14336), "mm", None, ("tma", "notma")),
]
if __name__ == "__main__":
    lab.main()
