"""Session 30: the split-axis tier's three kernels (and jnp's) under Nsight Compute, for two long-axis cases; each
function runs 3 times (compile, then 2 profiled calls). bench/lab/s30_split_ncu.sh runs it."""
import jax
import jax.numpy as jnp

import jax_kernels as jk
from jax_kernels import reference as ref

for shape, dt in (((4, 32768, 128), jnp.bfloat16), ((1, 1048576, 32), jnp.float32)):
    x = jax.random.normal(jax.random.key(0), shape, dt)
    s = jnp.ones((shape[1],), dt)
    for name, f in (("ours", lambda x, s: jk.layer_norm(x, s, s, axis=1)),
                    ("jnp", lambda x, s: ref.layer_norm(x, s, s, axis=1)),
                    ("ours_rms", lambda x, s: jk.rms_norm(x, s, axis=1))):
        g = jax.jit(f)
        for _ in range(3):
            jax.block_until_ready(g(x, s))
        print(shape, name, "done", flush=True)
