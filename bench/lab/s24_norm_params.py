"""Session 24 (a lead for the next session, H200): do the long-row norms miss 90% of copy because of their parameter
reads? The ring tier reads a scale (and bias) pack from L2 with every output pack, so a 16-bit LayerNorm row of
65536 columns brings 256 KB of parameters into the SM beside its 128 KB of x. Times the benchmark's long-row cases
with every parameter, with the scale only, and with none (CUPTI, median of 5 calls; x * c over the same bytes as the
ceiling).

  python bench/lab/s24_norm_params.py
"""
import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk
from jax_kernels._bench.timing import Timer, describe_device

rng = np.random.default_rng(0)
TIMER = Timer(describe_device(), iterations=5)  # the benchmark's CUPTI timer


def med_us(f, *args):
    """The benchmark's method: median CUPTI time of up to 5 calls (every output stays alive meanwhile)."""
    ms, _, out = TIMER.time(f, args, out_bytes=args[0].size * args[0].dtype.itemsize)
    del out
    return ms * 1e3


CASES = [(24576, 65536, jnp.bfloat16), (24576, 65536, jnp.float32), (49152, 32768, jnp.float32),
         (49152, 8192, jnp.float32)]
print(f"device: {jax.devices()[0].device_kind}")
print("| op | dtype | shape | params | us | GB/s | % of x*c |")
print("|---|---|---|---|---:|---:|---:|")
for rows, n, dt in CASES:
    x = jax.device_put(rng.standard_normal((rows, n), np.float32).astype(dt))
    s = jax.device_put(rng.standard_normal((n,), np.float32).astype(dt))
    b = jax.device_put(rng.standard_normal((n,), np.float32).astype(dt))
    nbytes = 2 * x.size * x.dtype.itemsize
    ceil = nbytes / med_us(jax.jit(lambda v: v * jnp.asarray(1.5, dt)), x) / 1e3  # 1.0001 is 1 in bf16: no kernel
    for op, params in (("layer_norm", "scale+bias"), ("layer_norm", "scale"), ("layer_norm", "none"),
                       ("rms_norm", "scale"), ("rms_norm", "none")):
        if op == "layer_norm":
            f = jax.jit({"scale+bias": lambda v: jk.layer_norm(v, s, b), "scale": lambda v: jk.layer_norm(v, s),
                         "none": lambda v: jk.layer_norm(v)}[params])
        else:
            f = jax.jit(lambda v: jk.rms_norm(v, s)) if params == "scale" else jax.jit(lambda v: jk.rms_norm(v))
        t = med_us(f, x)
        gbps = nbytes / t / 1e3
        print(f"| {op} | {jnp.dtype(dt).name} | {rows}x{n} | {params} | {t:.1f} | {gbps:.0f} | {100 * gbps / ceil:.1f}% |",
              flush=True)
    del x
