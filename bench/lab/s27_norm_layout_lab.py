"""Prepared in session 27, run in session 28 (call 1, bench/lab/s28_h200.md). Session 27's call 8 found our packed short-row
tier slower the more 128-byte lines one warp load touches (float32 32 columns: 8 lines x 64 B 3.1 us, 16 x 32 B 4.3,
32 x 16 B 9.0), while XLA's Triton fusion reads whole rows with each load (8 lanes a row, 4 rows a thread; 2.9 us).
The persistent short-row tier (norm_short.cuh) already has that layout: one pack a lane, W = the row's packs, R rows a
lane group loaded before any is reduced ("short R F M L": R rows, prefetch F, M CTAs an SM at most (0: occupancy), L = 1
its 32-bit-index variant, which session 18 never measured at these rows; lean with R = 4 runs R = 2). This times it
against the packed default and jnp at the benchmark's short rows; JK_NORM_TIER read per launch
(JK_NORM_TIER_DYNAMIC=1), parameters as jit arguments, the benchmark's timer (10 iterations), 2 rounds.
With S27_ROWS=1 it also times the packed tier with R rows a lane group ("packed C R"), which needs
bench/lab/s27_norm_rows.patch applied (session 27, compiled on the CPU machine only: float32 32 columns at C = 1,
R = 4 is 8 lanes a row and 4 rows a thread, XLA's layout, 55 registers; R = 1 kernels keep their instruction counts).

  [S27_ROWS=1] python bench/lab/s27_norm_layout_lab.py
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
VARIANTS = [("default", None), ("short 1 0 0 1", "short 1 0 0 1"), ("short 2 0 0 1", "short 2 0 0 1"),
            ("short 2 1 0 1", "short 2 1 0 1"), ("short 4 0 0 0", "short 4 0 0 0"), ("short 2 1 0 0", "short 2 1 0 0")]
if os.environ.get("S27_ROWS") == "1":
    VARIANTS += [("packed 1 4", "packed 1 4"), ("packed 1 2", "packed 1 2"), ("packed 2 2", "packed 2 2")]


def med_us(f, *args):
    ms, _, out = TIMER.time(f, args, out_bytes=args[0].size * args[0].dtype.itemsize)
    del out
    return ms * 1e3


print(f"device: {jax.devices()[0].device_kind}")
print("| op | dtype | cols | " + " | ".join(v for v, _ in VARIANTS) + " | jnp |")
print("|---|---|---:|" + "---:|" * (len(VARIANTS) + 1))
for cols in (32, 128):
    for dt in (jnp.float32, jnp.bfloat16, jnp.float16):
        x = jax.device_put(jnp.asarray(rng.standard_normal((49152, cols), np.float32), dt))
        s = jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt))
        b = jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt))
        for op in ("layer_norm", "rms_norm"):
            args = (x, s, b) if op == "layer_norm" else (x, s)
            f, g = jax.jit(getattr(jk, op)), jax.jit(getattr(ref, op))
            want = np.asarray(g(*args), np.float32)
            tol = 1e-4 if dt == jnp.float32 else 0.1
            for rnd in range(2):
                t = []
                for _, tier in VARIANTS:
                    if tier is not None:
                        os.environ["JK_NORM_TIER"] = tier
                    try:
                        t.append(med_us(f, *args))
                        err = float(np.max(np.abs(np.asarray(f(*args), np.float32) - want)))
                        assert err < tol, (tier, err)
                    finally:
                        os.environ.pop("JK_NORM_TIER", None)
                t.append(med_us(g, *args))
                print(f"| {op} | {jnp.dtype(dt).name} | {cols} | " + " | ".join(f"{v:.2f}" for v in t) + " |",
                      flush=True)
