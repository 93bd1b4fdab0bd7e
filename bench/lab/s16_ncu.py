"""Session 16: the Hopper tier's 128x64 tiles at 1024^3 against rows off 32-byte boundaries (K = 1000, N = 1000,
both), TMA and cp.async loads, for Nsight Compute (run under ncu -k regex:Wgmma). Two calls each."""
import os

import jax
import jax.numpy as jnp

import jax_kernels as jk

for load in ("tma", "cpasync"):
    os.environ["JK_MATMUL_WGMMA_LOAD"] = load
    for m, n, k in ((1024, 1024, 1024), (1024, 1024, 1000), (1024, 1000, 1024), (1000, 1000, 1000)):
        x = jax.random.normal(jax.random.key(0), (m, k), jnp.bfloat16)
        w = jax.random.normal(jax.random.key(1), (k, n), jnp.bfloat16)
        f = jax.jit(jk.matmul)
        for _ in range(2):
            jax.block_until_ready(f(x, w))
        print(f"ran {load} {m}x{n}x{k}", flush=True)
