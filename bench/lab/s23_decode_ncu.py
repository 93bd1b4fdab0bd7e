"""Session 23 (for Nsight Compute, bench/lab/s23_decode_ncu.sh): XLA's decode gemm (bf16 8x4096x4096: a split-K
Triton gemm and a reduction fusion), called 4 times. Inputs from NumPy (device_put launches no kernels)."""
import jax
import jax.numpy as jnp
import numpy as np

rng = np.random.default_rng(0)
a = jax.device_put(rng.standard_normal((8, 4096), np.float32).astype(jnp.bfloat16))
b = jax.device_put(rng.standard_normal((4096, 4096), np.float32).astype(jnp.bfloat16))
f = jax.jit(jnp.matmul)
for _ in range(4):
    jax.block_until_ready(f(a, b))
print("ran jnp decode", flush=True)
