"""Session 15 call 8 (a lab build: git apply bench/lab/s15_pipe_lab_flag.patch on commit 681fa62): where SkinnyPipe's time goes at 8x4096x4096. JK_MATMUL_PIPE_LAB
bit 1 skips the ring's copies (the math runs on whatever shared memory holds), bit 2 skips the math (the copies
still stream b): their times bound the copy-only and math-only costs; 3 leaves launch, barriers and the
epilogue. Results of those variants are wrong by design. Method as s15_decode_lab.py.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

lab.VARIANTS.update({
    "noload": {"JK_MATMUL_PIPE_LAB": "1"},
    "nomath": {"JK_MATMUL_PIPE_LAB": "2"},
    "neither": {"JK_MATMUL_PIPE_LAB": "3"},
})
V = ("noload", "nomath", "neither")
lab.CASES = [
    ("bf16 8x4096x4096 (L2)", jnp.bfloat16, (8, 4096, 4096), "mm", None, V),
    ("bf16 16x4096x4096 (L2)", jnp.bfloat16, (16, 4096, 4096), "mm", None, V),
    ("bf16 8x4096x14336 (DRAM)", jnp.bfloat16, (8, 4096, 14336), "mm", None, V),
]
if __name__ == "__main__":
    lab.main()
