"""Session 28: the packed short-row tier with R rows a lane group ("packed C R", C packs a lane, R rows; the R > 1
kernels from bench/lab/s27_norm_rows.patch extended to C = 4 and R = 8) against the default and jnp at the
benchmark's short rows (49152 x 32 and x 128, all dtypes, both norms). Session 27's two labs disagreed on 16-bit
128 columns, so every case runs 3 rounds and each round starts one variant later (jnp included in the rotation).
JK_NORM_TIER read per launch (JK_NORM_TIER_DYNAMIC=1), parameters as jit arguments, the benchmark's timer (CUPTI,
10 iterations, median). Variants the shape cannot take fall back to the default dispatch, so each case lists only
the ones that exist for its row (W = packs / C lanes a row must be a power of two up to 32).

  python bench/lab/s28_norm_rows_lab.py
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
ROUNDS = int(os.environ.get("S28_ROUNDS", "3"))
# (packs a row) -> variants; "default" = the committed dispatch.
VARIANTS = {
    4: ["default", "packed 1 2", "packed 2 2", "packed 1 4"],  # 16-bit 32 columns
    8: ["default", "packed 2 2", "packed 2 4", "packed 1 4", "packed 4 2", "packed 1 8"],  # float32 32
    16: ["default", "packed 2", "packed 4", "packed 8", "packed 2 2", "packed 4 2", "packed 2 4", "packed 1 8"],
    32: ["default", "packed 2 2", "packed 4 2", "packed 4", "packed 2 4"],  # float32 128
}


def med_us(f, *args):
    ms, _, out = TIMER.time(f, args, out_bytes=args[0].size * args[0].dtype.itemsize)
    del out
    return ms * 1e3


print(f"device: {jax.devices()[0].device_kind}; {ROUNDS} rounds, rotated; us (CUPTI median)")
for cols in (32, 128):
    for dt in (jnp.float32, jnp.bfloat16, jnp.float16):
        packs = cols * jnp.dtype(dt).itemsize // 16
        names = VARIANTS[packs] + ["jnp"]
        x = jax.device_put(jnp.asarray(rng.standard_normal((49152, cols), np.float32) + 0.5, dt))
        s = jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt))
        b = jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt))
        print(f"\n| op | dtype | cols | round | " + " | ".join(names) + " |")
        print("|---|---|---:|---:|" + "---:|" * len(names))
        for op in ("layer_norm", "rms_norm"):
            args = (x, s, b) if op == "layer_norm" else (x, s)
            f, g = jax.jit(getattr(jk, op)), jax.jit(getattr(ref, op))
            want = np.asarray(g(*args), np.float32)
            tol = 1e-4 if dt == jnp.float32 else 0.1
            best = {n: [] for n in names}
            for rnd in range(ROUNDS):
                t = {}
                order = names[rnd % len(names):] + names[:rnd % len(names)]
                for name in order:
                    if name == "jnp":
                        t[name] = med_us(g, *args)
                        continue
                    if name != "default":
                        os.environ["JK_NORM_TIER"] = name
                    try:
                        t[name] = med_us(f, *args)
                        err = float(np.max(np.abs(np.asarray(f(*args), np.float32) - want)))
                        assert err < tol, (name, err)
                    finally:
                        os.environ.pop("JK_NORM_TIER", None)
                for n in names:
                    best[n].append(t[n])
                print(f"| {op} | {jnp.dtype(dt).name} | {cols} | {rnd} | " + " | ".join(f"{t[n]:.2f}" for n in names)
                      + " |", flush=True)
            print(f"| {op} | {jnp.dtype(dt).name} | {cols} | median | "
                  + " | ".join(f"**{np.median(best[n]):.2f}**" for n in names) + " |", flush=True)
