"""Session 25 (H200): jnp's short-row LayerNorm with its parameters as jit arguments (as the benchmark passes them)
against closure constants (as the session's labs did), ours both ways; the benchmark's timer.

  python bench/lab/s25_params_arg.py
"""
import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk
from jax_kernels import reference as ref
from jax_kernels._bench.timing import Timer, describe_device

rng = np.random.default_rng(0)
TIMER = Timer(describe_device(), iterations=10)
print("| op | dtype | cols | impl | params | timer us |")
print("|---|---|---:|---|---|---:|")
for cols, dt in [(32, jnp.bfloat16), (128, jnp.bfloat16), (128, jnp.float16), (32, jnp.float32)]:
    x = jax.device_put(jnp.asarray(rng.standard_normal((49152, cols), np.float32), dt))
    s = jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt))
    b = jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt))
    for op, mod in (("layer_norm", "ln"), ("rms_norm", "rms")):
        for impl, lib in (("ours", jk), ("jnp", ref)):
            fn = getattr(lib, op)
            if op == "layer_norm":
                cases = {"closure": (jax.jit(lambda v: fn(v, s, b)), (x,)), "arguments": (jax.jit(fn), (x, s, b))}
            else:
                cases = {"closure": (jax.jit(lambda v: fn(v, s)), (x,)), "arguments": (jax.jit(fn), (x, s))}
            for how, (f, args) in cases.items():
                ms, _, out = TIMER.time(f, args, out_bytes=x.size * x.dtype.itemsize)
                del out
                print(f"| {op} | {jnp.dtype(dt).name} | {cols} | {impl} | {how} | {ms * 1e3:.2f} |", flush=True)
