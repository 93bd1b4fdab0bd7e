"""Session 27 (H200, no build needed): what XLA runs for the benchmark's short norm rows, where ours trails (LayerNorm
49152 x 32 all dtypes, 16-bit x 128; RMSNorm 16-bit x 32). The jnp functions are the benchmark's
(jax_kernels/reference.py, copied here so the package need not be built), scale and bias passed as jit arguments.
Under XLA_FLAGS=--xla_dump_to the dump holds each fusion's HLO, launch dimensions and PTX; under ncu each kernel's
launch statistics. Each function runs 3 times (compile, then 2 profiled calls).

  XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_as_text" python bench/lab/s27_xla_norm.py
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def layer_norm(x, scale, bias, epsilon=1e-5):
    xf = x.astype(jnp.float32)
    mean = jnp.mean(xf, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(xf - mean), axis=-1, keepdims=True)
    y = (xf - mean) * lax.rsqrt(var + epsilon)
    return (y * scale.astype(jnp.float32) + bias.astype(jnp.float32)).astype(x.dtype)


def rms_norm(x, scale, epsilon=1e-6):
    xf = x.astype(jnp.float32)
    y = xf * lax.rsqrt(jnp.mean(jnp.square(xf), axis=-1, keepdims=True) + epsilon)
    return (y * scale.astype(jnp.float32)).astype(x.dtype)


rng = np.random.default_rng(0)
for name, fn, cols, dt in [("ln", layer_norm, 32, jnp.float32), ("ln", layer_norm, 32, jnp.bfloat16),
                           ("ln", layer_norm, 32, jnp.float16), ("ln", layer_norm, 128, jnp.bfloat16),
                           ("ln", layer_norm, 128, jnp.float16), ("rms", rms_norm, 32, jnp.bfloat16),
                           ("rms", rms_norm, 32, jnp.float32)]:
    x = jax.device_put(jnp.asarray(rng.standard_normal((49152, cols), np.float32), dt))
    p = [jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt)) for _ in range(2)]
    f = jax.jit(fn)
    args = (x, p[0], p[1]) if name == "ln" else (x, p[0])
    for _ in range(3):
        jax.block_until_ready(f(*args))
    print(name, cols, jnp.dtype(dt).name, "done", flush=True)
