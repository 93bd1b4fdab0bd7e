"""Session 33: why the softmax window tier's register form reaches 96-97% of the copy ceiling on float32 rows but
72-85% on 16-bit rows of 1537-8195 columns (bench/lab/s33_softmax_window_lab_h200.txt), where the aligned 16-bit block
tier reaches 96-97% at 2048-8192 (the benchmark). One Nsight Compute run with the benchmark's conditions (no cache
flush, clocks as the card runs them: bench/lab/s33_call6.sh): softmax bf16 49152 x 2051 (window, 4 packs a thread,
96 threads) against 49152 x 2048 (aligned block tier) and float32 49152 x 2051 (window); log_softmax bf16 2051. Each
function runs 3 times: compile, then 2 profiled calls.
"""
import jax
import jax.numpy as jnp

import jax_kernels as jk

CASES = [(jk.softmax, 2051, jnp.bfloat16), (jk.softmax, 2048, jnp.bfloat16), (jk.softmax, 2051, jnp.float32),
         (jk.log_softmax, 2051, jnp.bfloat16)]
for fn, cols, dt in CASES:
    x = jax.random.normal(jax.random.key(cols), (49152, cols), jnp.float32).astype(dt)
    f = jax.jit(fn)
    for _ in range(3):
        f(x).block_until_ready()
