"""Session 16: the Hopper tier at bf16 4096^3 under Nsight Compute (run under ncu -k regex:Wgmma): the plain
matmul on its cooperative 128x256 schedule, the same forced onto ping-pong 128x128 (JK_MATMUL_WGMMA_SCHED), and
linear + bias + gelu (ping-pong by default). One call each after a warm-up."""
import os

import jax
import jax.numpy as jnp

import jax_kernels as jk

n = 4096
x = jax.random.normal(jax.random.key(0), (n, n), jnp.bfloat16)
w = (jax.random.normal(jax.random.key(1), (n, n), jnp.float32) / 64).astype(jnp.bfloat16)
b = jax.random.normal(jax.random.key(2), (n,), jnp.bfloat16)
for label, sched, fused in (("coop plain", None, False), ("pingpong plain", "pingpong", False),
                            ("pingpong linear gelu", None, True)):
    os.environ.pop("JK_MATMUL_WGMMA_SCHED", None)
    if sched:
        os.environ["JK_MATMUL_WGMMA_SCHED"] = sched
    f = jax.jit(lambda x, w, b: jk.linear(x, w, b, activation="gelu")) if fused else jax.jit(jk.matmul)
    args = (x, w, b) if fused else (x, w)
    jax.block_until_ready(f(*args))
    print(f"ran {label}", flush=True)
