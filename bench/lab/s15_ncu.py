"""For Nsight Compute (bench/lab/s15_lab.sh): the small cases that miss issue 3's and 6's 1.0x / 0.8x lines,
ours and the jnp composition each called twice (the first compiles). Inputs come from NumPy (device_put launches
no kernels), so the profiled kernels are the ops' own. Run under ncu with --cache-control none: the benchmark's
inputs of these sizes are L2-resident between calls.

  ncu ... python bench/lab/s15_ncu.py
"""
import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk
from jax_kernels import reference as ref

rng = np.random.default_rng(0)


def arr(shape, dt):
    return jax.device_put(rng.standard_normal(shape, np.float32).astype(dt))


def run(label, f, *args):
    for _ in range(2):
        jax.block_until_ready(f(*args))
    print(f"ran {label}", flush=True)


# decode matmul bf16 8x4096x4096 (issue 6: 0.66x)
a, b = arr((8, 4096), jnp.bfloat16), arr((4096, 4096), jnp.bfloat16)
run("ours matmul 8x4096x4096", jax.jit(jk.matmul), a, b)
run("jnp matmul 8x4096x4096", jax.jit(jnp.matmul), a, b)
# norms at 32 columns, bf16 (issue 3: 0.90-0.92x)
for dt in (jnp.bfloat16,):
    x, s, bb = arr((49152, 32), dt), arr((32,), dt), arr((32,), dt)
    run("ours layer_norm 49152x32", jax.jit(jk.layer_norm), x, s, bb)
    run("jnp layer_norm 49152x32", jax.jit(ref.layer_norm), x, s, bb)
    run("ours rms_norm 49152x32", jax.jit(jk.rms_norm), x, s)
    run("jnp rms_norm 49152x32", jax.jit(ref.rms_norm), x, s)
# transpose 2048x512 float32 (issue 5: 0.92x)
x = arr((2048, 512), np.float32)
run("ours transpose 2048x512", jax.jit(lambda v: jk.transpose(v, (1, 0))), x)
run("jnp transpose 2048x512", jax.jit(lambda v: jnp.transpose(v, (1, 0))), x)
