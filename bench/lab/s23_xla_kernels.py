"""Session 23, call 7 (no build): XLA's per-kernel CUPTI times (profiler.measure(aggregate=False), median of 20 calls
per kernel, XLA command buffers off) for issue 6's decode shapes, where XLA runs a split-K Triton gemm and a
reduction fusion (bench/lab/s23_h200.md call 1), and for the single-kernel misses, as a reference for the leads.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s23_xla_kernels.py
"""
import statistics

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.mosaic.gpu import profiler

HI = jax.lax.Precision.HIGHEST
rng = np.random.default_rng(0)


def arr(shape, dt):
    return jax.device_put(rng.standard_normal(shape, np.float32).astype(dt))


CASES = [("bf16 8x4096x4096", 8, 4096, 4096, jnp.bfloat16, None), ("bf16 16x4096x4096", 16, 4096, 4096, jnp.bfloat16, None),
         ("bf16 4x4096x4096", 4, 4096, 4096, jnp.bfloat16, None), ("bf16 8x2048x2048", 8, 2048, 2048, jnp.bfloat16, None),
         ("bf16 8x4096x14336", 8, 4096, 14336, jnp.bfloat16, None), ("bf16 8x14336x4096", 8, 14336, 4096, jnp.bfloat16, None),
         ("bf16 1000^3", 1000, 1000, 1000, jnp.bfloat16, None), ("f32 HIGHEST 512x512x256", 512, 512, 256, jnp.float32, HI)]


def per_kernel(f, args, runs=20):
    """(median total us, [(kernel name, median us)]) of f(*args) over `runs` CUPTI-measured calls, after a warm-up."""
    jax.block_until_ready(f(*args))
    times = [profiler.measure(f, aggregate=False)(*args)[1] for _ in range(runs)]
    names = [kname for kname, _ in times[0]]
    med = [statistics.median(r[i][1] for r in times) * 1e3 for i in range(len(names))]
    return statistics.median(sum(x for _, x in r) for r in times) * 1e3, list(zip(names, med))


if __name__ == "__main__":
    print(f"device: {jax.devices()[0].device_kind}")
    for name, m, n, k, dt, prec in CASES:  # label M x N x K
        a, b = arr((m, k), dt), arr((k, n), dt)
        total, kernels = per_kernel(jax.jit(lambda x, y: jnp.matmul(x, y, precision=prec)), (a, b))
        print(f"| {name} | total {total:.2f} us | " + " | ".join(f"{kn[:48]} {t:.2f}" for kn, t in kernels) + " |",
              flush=True)
