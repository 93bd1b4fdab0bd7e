"""Session 16: the exact-float32 split-K kernel (SimtRegisterBlockedSplitKernel, default split) at 512x512x256 and
256x512x1024 (M x N x K), for Nsight Compute (run under ncu -k regex:Simt). Two calls each."""
import jax
import jax.numpy as jnp

import jax_kernels as jk

HI = jax.lax.Precision.HIGHEST
for m, n, k in ((512, 512, 256), (256, 512, 1024)):
    x = jax.random.normal(jax.random.key(0), (m, k), jnp.float32)
    w = jax.random.normal(jax.random.key(1), (k, n), jnp.float32)
    f = jax.jit(lambda a, b: jk.matmul(a, b, precision=HI))
    for _ in range(2):
        jax.block_until_ready(f(x, w))
    print(f"ran {m}x{n}x{k}", flush=True)
