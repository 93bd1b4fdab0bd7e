"""Session 23, call 14: SkinnyPipe's geometry again now that its b stages are swizzled (the knobs of sessions 4-15:
CW columns per CTA, CTAs per SM, cluster size, the 8-deep ring at CW 128). The benchmark run (call 13) had bf16
8x4096x4096 at 9.0 us against jnp's 7.2 (0.79x). bench/lab/matmul_small_s4_lab.py's method: CUPTI, median of 20
calls, jnp in one process, XLA command buffers off.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s23_pipe_geom_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

P = {"JK_MATMUL_PIPE": "1"}
lab.VARIANTS.update({
    "ours2": {},
    "cw128": {**P, "JK_MATMUL_PIPE_CW": "128"},
    "cw128c2": {**P, "JK_MATMUL_PIPE_CW": "128", "JK_MATMUL_PIPE_CLUSTER": "2"},
    "c4": {**P, "JK_MATMUL_PIPE_CLUSTER": "4"},
    "c1x2": {**P, "JK_MATMUL_PIPE_CTAS_PER_SM": "2"},
    "deep": {**P, "JK_MATMUL_PIPE_CW": "128", "JK_MATMUL_PIPE_STAGES": "8"},
    "deepc2": {**P, "JK_MATMUL_PIPE_CW": "128", "JK_MATMUL_PIPE_STAGES": "8", "JK_MATMUL_PIPE_CLUSTER": "2"},
})
V = ("ours2", "cw128", "cw128c2", "c4", "c1x2", "deep", "deepc2")
lab.CASES = [
    ("bf16 8x4096x4096 (L2)", jnp.bfloat16, (8, 4096, 4096), "mm", None, V),
    ("f16 8x4096x4096 (L2)", jnp.float16, (8, 4096, 4096), "mm", None, V),
    ("bf16 16x4096x4096", jnp.bfloat16, (16, 4096, 4096), "mm", None, V),
    ("bf16 4x4096x4096", jnp.bfloat16, (4, 4096, 4096), "mm", None, V),
    ("bf16 8x2048x2048", jnp.bfloat16, (8, 2048, 2048), "mm", None, V),
    ("bf16 8x4096x14336 (DRAM)", jnp.bfloat16, (8, 4096, 14336), "mm", None, V),
    ("bf16 8x14336x4096 (DRAM)", jnp.bfloat16, (8, 14336, 4096), "mm", None, V),
]
if __name__ == "__main__":
    lab.main()
