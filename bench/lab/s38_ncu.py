"""Session 38, call 7 (under Nsight Compute, bench/lab/s38_call7.sh): float32 and int8 2048x512 transposes, ours (on
the grid of tiles) and jnp.transpose, each called 4 times after its compile, so the profile has ours and XLA's kernel
side by side with the same input buffer (L2-warm: no cache flush).
  ncu ... python bench/lab/s38_ncu.py
"""
import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk

rng = np.random.default_rng(0)
for dt in (np.float32, np.int8):
    if dt == np.int8:
        x = jax.device_put(rng.integers(-100, 100, (2048, 512), dtype=np.int8))
    else:
        x = jax.device_put(rng.standard_normal((2048, 512), np.float32))
    for name, f in (("ours", jax.jit(lambda v: jk.transpose(v))), ("jnp", jax.jit(lambda v: jnp.transpose(v)))):
        jax.block_until_ready(f(x))
        for _ in range(4):
            jax.block_until_ready(f(x))
        print(f"ran {name} 2048x512 {np.dtype(dt).name}", flush=True)
