"""Session 26, for Nsight Compute (bench/lab/s26_call2.sh): exact float32 512x512x256 (issue 6: 0.77-0.78x), jnp's
kernel against ours (the split-K cluster kernel with session 26's lean barriers); each called twice (the first
compiles). Inputs from NumPy (device_put launches no kernels).

  ncu ... python bench/lab/s26_ncu.py
"""
import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk

rng = np.random.default_rng(0)
HI = jax.lax.Precision.HIGHEST
a = jax.device_put(rng.standard_normal((512, 256), np.float32))
b = jax.device_put(rng.standard_normal((256, 512), np.float32))
for label, f in [("jnp", jax.jit(lambda x, y: jnp.matmul(x, y, precision=HI))),
                 ("ours", jax.jit(lambda x, y: jk.matmul(x, y, precision=HI)))]:
    for _ in range(2):
        jax.block_until_ready(f(a, b))
    print(f"ran {label} f32 512x512x256", flush=True)
