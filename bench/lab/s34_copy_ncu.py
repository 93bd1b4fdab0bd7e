"""Session 34, prepared and NOT run (no device time was left; for the next session), under Nsight Compute by
bench/lab/s34_call12.sh: XLA's x * c against our plain row copy,
the attention permute and the int8 8192^2 transpose at the same bytes (67 / 134 MB moved), each jitted, compiled, then
called twice; the call script profiles every kernel (DRAM bytes and throughput, L2 hit rate and sectors, occupancy,
instructions), the benchmark's conditions (no cache flush, clocks as the card runs them).

  python bench/lab/s34_copy_ncu.py
"""
import jax
import jax.numpy as jnp

import jax_kernels as jk

ON_GPU = jax.default_backend() == "gpu"
key = jax.random.key(0)
n = (32 * 128 * 64 * 64 * 2 // 4) if ON_GPU else 4096  # float32 elements of 33.5 MB (67 MB moved)
x = jax.random.normal(key, (n,), jnp.float32)
cases = [("x*c 67 MB", jax.jit(lambda x: x * jnp.float32(1.0001)), x),
         ("row copy 67 MB", jax.jit(lambda y: jk.transpose(y, (1, 0, 2))), x.reshape(2, 2, n // 4)),
         ("permute", jax.jit(lambda p: jk.transpose(p, (0, 2, 1, 3))),
          jax.random.normal(key, (32, 128, 64, 64) if ON_GPU else (2, 4, 8, 8), jnp.bfloat16))]
m = 8192 if ON_GPU else 64
i8 = jax.random.randint(key, (m, m), -128, 127, jnp.int8)
cases += [("x+1 int8 8192^2", jax.jit(lambda a: a + jnp.int8(1)), i8),
          ("transpose int8 8192^2", jax.jit(lambda a: jk.transpose(a, (1, 0))), i8)]
for name, f, a in cases:
    jax.block_until_ready(f(a))
    for _ in range(2):
        jax.block_until_ready(f(a))
    print(name, "done", flush=True)
