"""Session 23, call 11 (JK_MATMUL_PIPE_PAD existed in that call's build only, 785b0e5): SkinnyPipe's b stages in the swizzled layout (the default now) against the padded rows of
before (JK_MATMUL_PIPE_PAD=1), and against its TMA form (tma: forced on; notma: forced off where b is larger than
L2). Each variant twice (ours2, pad2). bench/lab/matmul_small_s4_lab.py's method: CUPTI, median of 20 calls, jnp in
one process, XLA command buffers off.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s23_pipe_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

lab.VARIANTS.update({"ours2": {}, "pad": {"JK_MATMUL_PIPE_PAD": "1"}, "pad2": {"JK_MATMUL_PIPE_PAD": "1"},
                     "tma": {"JK_MATMUL_PIPE_TMA": "1"}, "notma": {"JK_MATMUL_PIPE_TMA": "0"}})
V = ("ours2", "pad", "pad2", "tma")
VD = ("ours2", "pad", "pad2", "notma")  # b past L2: the default is the TMA form
lab.CASES = [
    ("bf16 8x4096x4096 (L2)", jnp.bfloat16, (8, 4096, 4096), "mm", None, V),
    ("f16 8x4096x4096 (L2)", jnp.float16, (8, 4096, 4096), "mm", None, V),
    ("bf16 16x4096x4096", jnp.bfloat16, (16, 4096, 4096), "mm", None, V),
    ("bf16 4x4096x4096", jnp.bfloat16, (4, 4096, 4096), "mm", None, V),
    ("bf16 2x4096x4096", jnp.bfloat16, (2, 4096, 4096), "mm", None, V),
    ("bf16 8x2048x2048", jnp.bfloat16, (8, 2048, 2048), "mm", None, V),
    ("bf16 8x4096x11008", jnp.bfloat16, (8, 4096, 11008), "mm", None, V),
    ("bf16 8x4096x14336 (DRAM)", jnp.bfloat16, (8, 4096, 14336), "mm", None, VD),
    ("bf16 8x14336x4096 (DRAM)", jnp.bfloat16, (8, 14336, 4096), "mm", None, VD),
    ("linear bf16 8x4096x4096 bias+gelu", jnp.bfloat16, (8, 4096, 4096), "lin", None, ("pad",)),
]
if __name__ == "__main__":
    lab.main()
