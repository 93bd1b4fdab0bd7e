"""Session 34: what a plain elementwise pass reaches at the sizes of issue 5's two sub-90% cases, in the benchmark's
conditions (CUPTI median of 10 calls, each call's output kept alive, the same input every call), against our
transposes of the same bytes:
  - XLA's x * c over float32 arrays of 67 MB and 134 MB moved (the permute's and int8 8192^2's bytes), and x + 1 on
    the int8 8192^2 array itself; the 1 GiB x * c (the benchmark's copy ceiling) in the same process;
  - our int8 8192^2 transpose, the attention permute, and a plain copy through our row copy (a (2, 2, n) (1, 0, 2)
    permutation: runs of n elements, 16-byte vectors) at both sizes.
(The call script adds Nsight Compute's launch statistics of XLA's x * c kernel.)

  python bench/lab/s34_copy_lab.py
"""
import os
import statistics

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels._bench.timing import Timer, describe_device  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
TIMER = Timer(describe_device(), iterations=10, min_time_s=0.25)
ROUNDS = 3 if ON_GPU else 1
S = 1 if ON_GPU else 4096  # CPU smoke: tiny sizes
key = jax.random.key(0)


def f32(nbytes):
    return jax.random.normal(key, (nbytes // 4 // S,), jnp.float32)


cases = []
ceiling = f32(1 << 30)
cases.append(("x*c float32 1 GiB (ceiling)", jax.jit(lambda x: x * jnp.float32(1.0001)), (ceiling,), 2 << 30))
for mb, label in ((32 * 128 * 64 * 64 * 2, "67 MB"), (8192 * 8192, "134 MB")):
    x = f32(mb)
    cases.append((f"x*c float32 {label} moved", jax.jit(lambda x: x * jnp.float32(1.0001)), (x,), 2 * mb // S))
    n = mb // 4 // S
    y = x.reshape(2, 2, n // 4)
    cases.append((f"row copy float32 {label} (2,2,n) (1,0,2)", jax.jit(lambda y: jk.transpose(y, (1, 0, 2))), (y,),
                  2 * mb // S))
i8 = jax.random.randint(key, (8192 // (64 if S > 1 else 1), 8192), -128, 127, jnp.int8)
cases.append(("x+1 int8 8192^2", jax.jit(lambda x: x + jnp.int8(1)), (i8,), 2 * i8.size))
cases.append(("transpose int8 8192^2", jax.jit(lambda x: jk.transpose(x, (1, 0))), (i8,), 2 * i8.size))
p = jax.random.normal(key, (32, 128, 64, 64 // S if S > 1 else 64), jnp.bfloat16)
cases.append(("permute bf16 32x128x64x64 (0,2,1,3)", jax.jit(lambda x: jk.transpose(x, (0, 2, 1, 3))), (p,),
              2 * p.size * 2))
cases.append(("jnp permute bf16 (0,2,1,3)", jax.jit(lambda x: jnp.transpose(x, (0, 2, 1, 3))), (p,), 2 * p.size * 2))

t = {c[0]: [] for c in cases}
print(f"device: {jax.devices()[0].device_kind}; {ROUNDS} rounds; us (CUPTI median of 10); GB/s; % of the 1 GiB x*c",
      flush=True)
for rnd in range(ROUNDS):
    for name, f, args, nbytes in cases[rnd % len(cases):] + cases[:rnd % len(cases)]:
        ms, _, _ = TIMER.time(f, args, out_bytes=nbytes // 2)
        t[name].append(ms * 1e3)
ceil_gbs = max((2 << 30) / (us * 1e-6) / 1e9 for us in t[cases[0][0]])
for name, f, args, nbytes in cases:
    us = min(t[name])
    gbs = nbytes / (us * 1e-6) / 1e9
    print(f"{name:44s} best {us:9.2f} us  {gbs:7.0f} GB/s  {100 * gbs / ceil_gbs:6.1f}%  rounds " +
          " ".join(f"{v:.2f}" for v in t[name]), flush=True)
