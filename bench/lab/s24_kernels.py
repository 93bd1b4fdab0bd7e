"""Session 24: per-kernel CUPTI times (profiler.measure(aggregate=False), median of 20 calls per kernel, XLA command
buffers off) of the decode cases, ours by decode form (JK_MATMUL_DECODE=split|cluster) and XLA's (split-K Triton gemm
+ reduction fusion), to see where SplitPipe's two kernels spend their time.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s24_kernels.py
"""
import os
import statistics

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.mosaic.gpu import profiler

import jax_kernels as jk

rng = np.random.default_rng(0)


def arr(shape, dt):
    return jax.device_put(rng.standard_normal(shape, np.float32).astype(dt))


CASES = [("bf16 8x4096x4096", 8, 4096, 4096), ("bf16 16x4096x4096", 16, 4096, 4096),
         ("bf16 8x2048x2048", 8, 2048, 2048), ("bf16 8x4096x14336", 8, 4096, 14336)]
FORMS = [("split", {"JK_MATMUL_DECODE": "split"}), ("cluster", {"JK_MATMUL_DECODE": "cluster"}), ("xla", None)]
print(f"device: {jax.devices()[0].device_kind}")
for name, m, n, k in CASES:  # label M x N x K
    a, b = arr((m, k), jnp.bfloat16), arr((k, n), jnp.bfloat16)
    for form, env in FORMS:
        os.environ.pop("JK_MATMUL_DECODE", None)
        os.environ.update(env or {})
        f = jax.jit(jnp.matmul if env is None else jk.matmul)
        jax.block_until_ready(f(a, b))
        runs = []
        for _ in range(20):
            _, t = profiler.measure(f, aggregate=False)(a, b)
            runs.append(t)
        names = [kname for kname, _ in runs[0]]
        med = [statistics.median(r[i][1] for r in runs) * 1e3 for i in range(len(names))]
        total = statistics.median(sum(x for _, x in r) for r in runs) * 1e3
        print(f"| {name} | {form} | total {total:.2f} us | "
              + " | ".join(f"{kn[:40]} {t:.2f}" for kn, t in zip(names, med)) + " |", flush=True)
