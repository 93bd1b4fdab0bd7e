"""For Nsight Compute (bench/lab/s13_lab.sh): the kernels of one case, each called twice (the first compiles),
inputs made before the calls so the only kernels profiled are the op's.

  ncu ... python bench/lab/s13_ncu.py simt        exact float32 matmul 4096^3 (SimtRegisterBlocked)
  ncu ... python bench/lab/s13_ncu.py warp128     log_softmax 49152 x 128, bfloat16 then float16
"""
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk

mode = sys.argv[1]
rng = np.random.default_rng(0)
if mode == "simt":
    a = jax.device_put(rng.standard_normal((4096, 4096), np.float32))
    b = jax.device_put(rng.standard_normal((4096, 4096), np.float32))
    f = jax.jit(lambda a, b: jk.matmul(a, b, precision=jax.lax.Precision.HIGHEST))
    for _ in range(2):
        jax.block_until_ready(f(a, b))
elif mode == "warp128":
    x32 = rng.standard_normal((49152, 128), np.float32)
    f = jax.jit(jk.log_softmax)
    for dt in (jnp.bfloat16, jnp.float16):
        x = jax.device_put(x32.astype(dt))
        for _ in range(2):
            jax.block_until_ready(f(x))
else:
    raise SystemExit(f"unknown mode {mode}")
