"""Session 25 (H200): the packed short-row tier (norm_short_packed.cuh) after its instruction diet (unsigned thread
indices, absent parameters read from rows of ones / zeros instead of branches and defaults, no statistics code in
RMSNorm), with CTAs of 256 / 128 / 64 threads (JK_NORM_PACKED_THREADS) and other packs per lane (JK_NORM_TIER="packed
C", read per launch with JK_NORM_TIER_DYNAMIC=1). 49152 rows of 32-128 columns (the benchmark's short, L2-resident
cases), against jnp in the same process; CUPTI, the benchmark's timer (median of 5 calls), each case twice.

  [S25_COLS="32 128"] python bench/lab/s25_norm_short.py
"""
import os

os.environ["JK_NORM_TIER_DYNAMIC"] = "1"
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels import reference as ref  # noqa: E402
from jax_kernels._bench.timing import Timer, describe_device  # noqa: E402

rng = np.random.default_rng(0)
TIMER = Timer(describe_device(), iterations=5)


def med_us(f, *args):
    ms, _, out = TIMER.time(f, args, out_bytes=args[0].size * args[0].dtype.itemsize)
    del out
    return ms * 1e3


def variants(cols, dtype):
    """Call 2 also timed CTAs of 128 / 64 threads (JK_NORM_PACKED_THREADS, since removed) and 2 / 4 packs per lane.
    S25_MB=1 (session 26, call 6; the build needs bench/lab/s26_norm_minblocks.patch): 16-bit LayerNorm's 2-pack
    kernel capped at 40 registers (6 CTAs an SM: one wave of 768 CTAs at 128 columns) against the default."""
    if os.environ.get("S25_MB") == "1" and jnp.dtype(dtype).itemsize == 2:
        mb = {"JK_NORM_PACKED_MINBLOCKS": "6"}
        if cols == 128:
            return [("default", {}), ("packed 2", {"JK_NORM_TIER": "packed 2"}),
                    ("packed 2 mb6", {"JK_NORM_TIER": "packed 2", **mb})]
        return [("default", {}), ("mb6", mb)]
    return [("default", {})]


ROWS = 49152
print(f"device: {jax.devices()[0].device_kind}")
print("| op | dtype | cols | variant | us | jnp us | x jnp | max err vs jnp |")
print("|---|---|---:|---|---:|---:|---:|---:|")
for cols in [int(c) for c in os.environ.get("S25_COLS", "32 64 128").split()]:
    for dt in (jnp.float32, jnp.bfloat16, jnp.float16):
        x = jax.device_put(jnp.asarray(rng.standard_normal((ROWS, cols), np.float32) + 1.0, dt))
        s = jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt))
        b = jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt))
        for op in ("layer_norm", "rms_norm"):
            # Parameters as arguments (calls 2 and 4 closed over them, which slows jnp's fusion: call 8).
            args = (x, s, b) if op == "layer_norm" else (x, s)
            f, g = jax.jit(getattr(jk, op)), jax.jit(getattr(ref, op))
            want = np.asarray(g(*args), np.float32)
            for rep in range(2):
                t_jnp = med_us(g, *args)
                for name, env in variants(cols, dt):
                    for k in ("JK_NORM_PACKED_THREADS", "JK_NORM_TIER", "JK_NORM_PACKED_MINBLOCKS"):
                        os.environ.pop(k, None)
                    os.environ.update(env)
                    err = float(np.max(np.abs(np.asarray(f(*args), np.float32) - want))) if rep == 0 else float("nan")
                    t = med_us(f, *args)
                    print(f"| {op} | {jnp.dtype(dt).name} | {cols} | {name} | {t:.2f} | {t_jnp:.2f} | "
                          f"{t_jnp / t:.3f} | {err:.1e} |", flush=True)
                for k in ("JK_NORM_PACKED_THREADS", "JK_NORM_TIER", "JK_NORM_PACKED_MINBLOCKS"):
                    os.environ.pop(k, None)
