"""For Nsight Compute (bench/lab/s14_lab5.sh): issue 5's transpose cases that miss a target, ours and
jnp.transpose, each called twice (the first compiles). Inputs come from NumPy (device_put launches no kernels),
so the profiled kernels are the transposes' own.

  ncu ... python bench/lab/s14_transpose_ncu.py
"""
import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk

CASES = [  # (shape, dtype, permutation)
    ((2048, 512), np.float32, (1, 0)),
    ((2048, 512), np.int8, (1, 0)),
    ((8192, 8192), np.int8, (1, 0)),
    ((8192, 8192), jnp.bfloat16, (1, 0)),
    ((32, 128, 64, 64), jnp.bfloat16, (0, 2, 1, 3)),
]
rng = np.random.default_rng(0)
for shape, dt, perm in CASES:
    if np.dtype(dt) == np.int8:
        x = jax.device_put(rng.integers(-100, 100, shape, dtype=np.int8))
    else:
        x = jax.device_put(rng.standard_normal(shape, np.float32).astype(dt))
    for name, f in (("ours", jax.jit(lambda v, p=perm: jk.transpose(v, p))),
                    ("jnp", jax.jit(lambda v, p=perm: jnp.transpose(v, p)))):
        for _ in range(2):
            jax.block_until_ready(f(x))
        print(f"ran {name} {shape} {np.dtype(dt).name} {perm}", flush=True)
    del x
