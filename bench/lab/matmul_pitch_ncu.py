"""For Nsight Compute (bench/lab/s7_pitch.sh): one bf16 matmul per shape, jnp's and ours, each called twice
(the first compiles), inputs made on the host so the only kernels are the matmuls'.

  ncu ... python bench/lab/matmul_pitch_ncu.py MxNxK [MxNxK ...]
"""
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk

for spec in sys.argv[1:]:
    m, n, k = (int(v) for v in spec.split("x"))
    rng = np.random.default_rng(0)
    a = jax.device_put(rng.standard_normal((m, k), np.float32).astype(jnp.bfloat16))
    b = jax.device_put(rng.standard_normal((k, n), np.float32).astype(jnp.bfloat16))
    for f in (jax.jit(jnp.matmul), jax.jit(jk.matmul)):
        for _ in range(2):
            jax.block_until_ready(f(a, b))
