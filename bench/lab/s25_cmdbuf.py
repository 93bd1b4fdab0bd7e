"""Session 25 (H200): why jnp's short-row LayerNorm runs shorter in the benchmark than in the labs. The benchmark
leaves XLA's command buffers on (its default) and the labs turn them off. Times ours and jnp both ways: the
benchmark's timer (CUPTI, `iterations` calls measured together, median), and per kernel over single calls
(bench/lab/s23_xla_kernels.per_kernel). Run it once per mode; XLA_FLAGS is read when the backend starts.

  python bench/lab/s25_cmdbuf.py; XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s25_cmdbuf.py
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk
from jax_kernels import reference as ref
from jax_kernels._bench.timing import Timer, describe_device

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s23_xla_kernels import per_kernel  # noqa: E402

rng = np.random.default_rng(0)
TIMER = Timer(describe_device(), iterations=10)
mode = "command buffers off" if "command_buffer=" in os.environ.get("XLA_FLAGS", "") else "default flags"
print(f"device: {jax.devices()[0].device_kind}; {mode}")
print("| mode | op | dtype | cols | impl | timer us | single-call total us | kernels (us) |")
print("|---|---|---|---:|---|---:|---:|---|")
for cols, dt in [(32, jnp.bfloat16), (128, jnp.bfloat16), (32, jnp.float32)]:
    x = jax.device_put(jnp.asarray(rng.standard_normal((49152, cols), np.float32) + 1.0, dt))
    s = jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt))
    b = jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt))
    for op in ("layer_norm", "rms_norm"):
        fns = {"ours": jax.jit(lambda v: jk.layer_norm(v, s, b)) if op == "layer_norm" else jax.jit(lambda v: jk.rms_norm(v, s)),
               "jnp": jax.jit(lambda v: ref.layer_norm(v, s, b)) if op == "layer_norm" else jax.jit(lambda v: ref.rms_norm(v, s))}
        for impl, f in fns.items():
            ms, _, out = TIMER.time(f, (x,), out_bytes=x.size * x.dtype.itemsize)
            del out
            total, kernels = per_kernel(f, (x,))
            ks = "; ".join(f"{name[:40]} {t:.2f}" for name, t in kernels)
            print(f"| {mode} | {op} | {jnp.dtype(dt).name} | {cols} | {impl} | {ms * 1e3:.2f} | {total:.2f} | {ks} |",
                  flush=True)
