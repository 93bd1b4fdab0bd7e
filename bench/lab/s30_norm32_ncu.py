"""Prepared in session 29 for the next (H200; needs the package built): ours and XLA's kernels side by side for the
short norm rows that trail jnp in the sweep (LayerNorm 49152 x 32 bf16 / f16 / float32, RMSNorm 49152 x 32 f16,
LayerNorm 49152 x 128 bf16), under one Nsight Compute run with the benchmark's conditions (no cache flush, clocks
not locked: bench/lab/s30_norm32_ncu.sh). Sessions 27-29 compared instruction counts (ours 226-244 a warp against
XLA's 204-220 at 16-bit 32 columns) and found that taking 18 of them out changed nothing; what is not yet compared is
where each kernel's warps wait (stall reasons per issued instruction), its cycles active, and its launch / tail
(sm__cycles_active against gpu__time_duration). Each function runs 3 times: compile, then 2 profiled calls.

  ncu ... python bench/lab/s30_norm32_ncu.py
"""
import os

import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk
from jax_kernels import reference as ref

rng = np.random.default_rng(0)
CASES = [("layer_norm", 32, jnp.bfloat16), ("layer_norm", 32, jnp.float16), ("layer_norm", 32, jnp.float32),
         ("rms_norm", 32, jnp.float16), ("layer_norm", 128, jnp.bfloat16)]
CASES = CASES[:int(os.environ.get("JK_NORM32_CASES", len(CASES)))]  # the first N only (s31_norm32_sass_stalls.sh: 1)
for op, cols, dt in CASES:
    x = jax.device_put(jnp.asarray(rng.standard_normal((49152, cols), np.float32) + 0.5, dt))
    p = [jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt)) for _ in range(2)]
    args = (x, p[0], p[1]) if op == "layer_norm" else (x, p[0])
    for impl, fn in (("ours", getattr(jk, op)), ("jnp", getattr(ref, op))):
        f = jax.jit(fn)
        for _ in range(3):
            jax.block_until_ready(f(*args))
        print(op, cols, jnp.dtype(dt).name, impl, "done", flush=True)
