"""Session 23, call 15 (bench/lab/s23_cmdbuf.sh): the decode and small cases of issue 6, ours and jnp, in whatever
XLA_FLAGS the caller sets (command buffers off or default). matmul_small_s4_lab.py's method: CUPTI, median of 20."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

HI = jax.lax.Precision.HIGHEST
lab.VARIANTS.update({"ours2": {}})
V = ("ours2",)
lab.CASES = [
    ("bf16 8x4096x4096 (L2)", jnp.bfloat16, (8, 4096, 4096), "mm", None, V),
    ("f16 8x4096x4096 (L2)", jnp.float16, (8, 4096, 4096), "mm", None, V),
    ("bf16 4x4096x4096", jnp.bfloat16, (4, 4096, 4096), "mm", None, V),
    ("bf16 1000^3", jnp.bfloat16, (1000, 1000, 1000), "mm", None, V),
    ("f32 HIGHEST 512x512x256", jnp.float32, (512, 512, 256), "mm", HI, V),
    ("linear bf16 8x4096x4096 bias+gelu", jnp.bfloat16, (8, 4096, 4096), "lin", None, V),
]
if __name__ == "__main__":
    lab.main()
