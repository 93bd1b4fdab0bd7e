"""Session 24: per-kernel CUPTI times (profiler.measure(aggregate=False), median of 20 calls per kernel, XLA command
buffers off) of the decode cases, ours by decode form (JK_MATMUL_DECODE=split|cluster) and XLA's (split-K Triton gemm
+ reduction fusion), to see where SplitPipe's two kernels spend their time.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s24_kernels.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import jax_kernels as jk  # noqa: E402
from s23_xla_kernels import arr, per_kernel  # noqa: E402

CASES = [("bf16 8x4096x4096", 8, 4096, 4096), ("bf16 16x4096x4096", 16, 4096, 4096),
         ("bf16 8x2048x2048", 8, 2048, 2048), ("bf16 8x4096x14336", 8, 4096, 14336)]
FORMS = [("split", {"JK_MATMUL_DECODE": "split"}), ("cluster", {"JK_MATMUL_DECODE": "cluster"}), ("xla", None)]
print(f"device: {jax.devices()[0].device_kind}")
for name, m, n, k in CASES:  # label M x N x K
    a, b = arr((m, k), jnp.bfloat16), arr((k, n), jnp.bfloat16)
    for form, env in FORMS:
        os.environ.pop("JK_MATMUL_DECODE", None)
        os.environ.update(env or {})
        total, kernels = per_kernel(jax.jit(jnp.matmul if env is None else jk.matmul), (a, b))
        print(f"| {name} | {form} | total {total:.2f} us | "
              + " | ".join(f"{kn[:40]} {t:.2f}" for kn, t in kernels) + " |", flush=True)
