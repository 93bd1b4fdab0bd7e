"""Session 27 (H200): float32 norms at 32 columns with 4 packs a lane (W = 2 lanes a row, 16 elements a thread: the
work split of XLA's Triton fusion for this case, 128-thread CTAs of 64 rows, ~212 instructions a warp; bench/lab/
s27_h200.md call 7) against the default 2 (W = 4, 8 elements) and 8 (one thread a row), JK_NORM_TIER="packed C" read
per launch (JK_NORM_TIER_DYNAMIC=1). 49152 x 32, parameters as jit arguments, jnp in the same process; the
benchmark's timer and iterations (10), the variants in rotating order, 3 rounds.

  python bench/lab/s27_norm32_lab.py
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
TIMER = Timer(describe_device(), iterations=10)


def med_us(f, *args):
    ms, _, out = TIMER.time(f, args, out_bytes=args[0].size * args[0].dtype.itemsize)
    del out
    return ms * 1e3


print(f"device: {jax.devices()[0].device_kind}")
print("| op | dtype | cols | round | 2 packs us | 4 packs us | 8 packs us | jnp us |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for op in ("layer_norm", "rms_norm"):
    dt, cols = jnp.float32, 32
    x = jax.device_put(jnp.asarray(rng.standard_normal((49152, cols), np.float32), dt))
    s = jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt))
    b = jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt))
    args = (x, s, b) if op == "layer_norm" else (x, s)
    f, g = jax.jit(getattr(jk, op)), jax.jit(getattr(ref, op))
    want = np.asarray(g(*args), np.float32)
    runs = {"2": "packed 2", "4": "packed 4", "8": "packed 8", "jnp": None}
    order = list(runs)
    for rnd in range(3):
        t = {}
        for name in order[rnd % 4:] + order[:rnd % 4]:
            if runs[name] is None:
                t[name] = med_us(g, *args)
                continue
            os.environ["JK_NORM_TIER"] = runs[name]
            try:
                t[name] = med_us(f, *args)
                err = float(np.max(np.abs(np.asarray(f(*args), np.float32) - want)))
                assert err < 1e-4, (name, err)
            finally:
                os.environ.pop("JK_NORM_TIER", None)
        print(f"| {op} | float32 | {cols} | {rnd} | {t['2']:.2f} | {t['4']:.2f} | {t['8']:.2f} | {t['jnp']:.2f} |",
              flush=True)
