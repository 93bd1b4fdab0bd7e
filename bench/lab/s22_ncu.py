"""Session 22, for Nsight Compute (bench/lab/s22_ncu.sh): exact float32 512x512x256 (issue 6: 0.77x), jnp's kernel
against ours (the split-K cluster kernel, JK_MATMUL_SIMT=nopanel, and SimtPanel, =panel), and bf16 1000^3 (0.72x)
jnp against ours; each called twice (the first compiles). Inputs from NumPy (device_put launches no kernels).

  ncu ... python bench/lab/s22_ncu.py
"""
import os

import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk

rng = np.random.default_rng(0)
HI = jax.lax.Precision.HIGHEST


def arr(shape, dt):
    return jax.device_put(rng.standard_normal(shape, np.float32).astype(dt))


def run(label, f, *args, env=None):
    os.environ.pop("JK_MATMUL_SIMT", None)
    os.environ.update(env or {})
    for _ in range(2):
        jax.block_until_ready(f(*args))
    print(f"ran {label}", flush=True)


a, b = arr((512, 256), np.float32), arr((256, 512), np.float32)
run("jnp f32 512x512x256", jax.jit(lambda x, y: jnp.matmul(x, y, precision=HI)), a, b)
ours = jax.jit(lambda x, y: jk.matmul(x, y, precision=HI))
run("ours split f32 512x512x256", ours, a, b, env={"JK_MATMUL_SIMT": "nopanel"})
run("ours panel f32 512x512x256", ours, a, b, env={"JK_MATMUL_SIMT": "panel"})
a, b = arr((1000, 1000), jnp.bfloat16), arr((1000, 1000), jnp.bfloat16)
run("jnp bf16 1000^3", jax.jit(jnp.matmul), a, b)
run("ours bf16 1000^3", jax.jit(jk.matmul), a, b)
