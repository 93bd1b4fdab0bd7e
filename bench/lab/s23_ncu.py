"""Session 23, for Nsight Compute (bench/lab/s23_call2.sh): exact float32 512x512x256, XLA's Triton kernel against
SimtRing 16x32 at 32x4 (the default ring) and 32x32 tiles of 64 threads (t32; call 2 had 64x3, XLA's block_k
and stages). Each called twice (the first
compiles). Inputs from NumPy (device_put launches no kernels)."""
import os

import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk

rng = np.random.default_rng(0)
HI = jax.lax.Precision.HIGHEST


def run(label, f, *args, env=None):
    for v in ("JK_MATMUL_SIMT", "JK_MATMUL_SIMT_RING_CFG"):
        os.environ.pop(v, None)
    os.environ.update(env or {})
    for _ in range(2):
        jax.block_until_ready(f(*args))
    print(f"ran {label}", flush=True)


a = jax.device_put(rng.standard_normal((512, 256), np.float32))
b = jax.device_put(rng.standard_normal((256, 512), np.float32))
run("jnp f32 512x512x256", jax.jit(lambda x, y: jnp.matmul(x, y, precision=HI)), a, b)
ours = jax.jit(lambda x, y: jk.matmul(x, y, precision=HI))
run("ours split", ours, a, b)
run("ours ring 32x4", ours, a, b, env={"JK_MATMUL_SIMT": "ring16"})
run("ours ring t32", ours, a, b, env={"JK_MATMUL_SIMT": "ring16", "JK_MATMUL_SIMT_RING_CFG": "t32"})
