"""Prepared in session 28, run in session 29 (bench/lab/s29_h200.md call 1; the guard was not taken). Needs
bench/lab/s28_norm_guard.patch applied (s29_next_norm.sh does it):
16-bit LayerNorm on the packed short-row tier with guarded shift-free statistics (JK_NORM_GUARD=1, read at every
launch) against the default (the row shift) and jnp, at 49152 x 32 / 128 / 256 columns.

Why: session 28 compared SASS with XLA's Triton fusion at 16-bit 32 columns (bench/lab/s28_h200.md): of our 244
instructions a warp against its 220, the row shift (one subtraction an element and a shuffle a row) is most of the
difference. For 16-bit rows the float32 sum is exact in most rows, so the shift only matters where |mean| * rstd is
large; the guarded form skips it and redoes only warps with such a row (kGuardRatio, norm_short_packed.cuh in the
patch). Static fast-path estimate: ~10 instructions a warp fewer at 32 columns (244), ~26 at 128 (410).

Timing: 3 rounds in one process, each starting one variant later (jnp in the rotation), CUPTI medians, parameters as
jit arguments. Accuracy: max |y - y_default| in output ulps and max |y - float64| on normal rows, on rows near 1000
that differ by an ulp (the fallback path), and the statistics outputs.

  python bench/lab/s29_guard_lab.py
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
ROUNDS = int(os.environ.get("S29_ROUNDS", "3"))
# name -> (JK_NORM_TIER, JK_NORM_GUARD); None: unset.
VARIANTS = {"default": (None, None), "guard": (None, "1"), "guard packed 2 2": ("packed 2 2", "1"),
            "guard packed 4": ("packed 4", "1")}


def with_env(tier, guard, f, *args):
    for k, v in (("JK_NORM_TIER", tier), ("JK_NORM_GUARD", guard)):
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    try:
        return f(*args)
    finally:
        os.environ.pop("JK_NORM_TIER", None)
        os.environ.pop("JK_NORM_GUARD", None)


def med_us(f, *args):
    ms, _, out = TIMER.time(f, args, out_bytes=args[0].size * args[0].dtype.itemsize)
    del out
    return ms * 1e3


def np_ln(x, s, b):
    m = x.mean(-1, keepdims=True)
    r = 1.0 / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5)
    return (x - m) * r * s + b, m[..., 0], r[..., 0]


print(f"device: {jax.devices()[0].device_kind}; {ROUNDS} rounds, rotated; us (CUPTI median)")
f = jax.jit(lambda x, s, b: jk.layer_norm(x, s, b, return_stats=True))
g = jax.jit(ref.layer_norm)
for cols in (32, 128, 256):
    for dt in (jnp.bfloat16, jnp.float16):
        names = [n for n in VARIANTS if cols == 128 or not n.startswith("guard packed")] + ["jnp"]
        ulp = 2.0 ** (-7 if dt == jnp.bfloat16 else -10)
        # Accuracy first (the same inputs for every variant).
        cases = {"normal": rng.standard_normal((4096, cols)) * 2.0 + 0.5,
                 "1000 + ulps": 1000.0 + (4.0 if dt == jnp.bfloat16 else 0.5) * rng.integers(-3, 4, (4096, cols)),
                 "mixed": np.where(rng.random((4096, 1)) < 0.01, 1000.0 + rng.integers(0, 2, (4096, cols)),
                                   rng.standard_normal((4096, cols)))}
        s = jnp.asarray(rng.standard_normal(cols) * 0.5 + 1.0, dt)
        b = jnp.asarray(rng.standard_normal(cols) * 0.5, dt)
        for case, xh in cases.items():
            x = jnp.asarray(xh.astype(np.float32), dt)
            xf = np.asarray(x, np.float64)
            ey, em, er = np_ln(xf, np.asarray(s, np.float64), np.asarray(b, np.float64))
            y0, m0, r0 = (np.asarray(a, np.float64) for a in with_env(None, None, f, x, s, b))
            line = []
            for name in names[:-1]:
                tier, guard = VARIANTS[name]
                y, m, r = (np.asarray(a, np.float64) for a in with_env(tier, guard, f, x, s, b))
                line.append(f"{name}: y-default {np.max(np.abs(y - y0) / (ulp * np.maximum(1.0, np.abs(y0)))):.1f} ulp, "
                            f"y-f64 {np.max(np.abs(y - ey)):.2e}, mean err {np.max(np.abs(m - em) * er):.1e} std, "
                            f"rstd rel {np.max(np.abs(r - er) / er):.1e}")
            print(f"accuracy {jnp.dtype(dt).name} {cols} {case}:\n  " + "\n  ".join(line), flush=True)
        # Timing.
        x = jax.device_put(jnp.asarray(rng.standard_normal((49152, cols)).astype(np.float32) + 0.5, dt))
        args = (x, s, b)
        print(f"\n| dtype | cols | round | " + " | ".join(names) + " |")
        print("|---|---:|---:|" + "---:|" * len(names))
        rows = {n: [] for n in names}
        for rnd in range(ROUNDS):
            order = names[rnd % len(names):] + names[:rnd % len(names)]
            t = {}
            for name in order:
                if name == "jnp":
                    t[name] = med_us(g, *args)
                else:
                    t[name] = with_env(*VARIANTS[name], med_us, f, *args)
            for n in names:
                rows[n].append(t[n])
            print(f"| {jnp.dtype(dt).name} | {cols} | {rnd} | " + " | ".join(f"{t[n]:.2f}" for n in names) + " |",
                  flush=True)
        print(f"| {jnp.dtype(dt).name} | {cols} | median | " + " | ".join(f"**{np.median(rows[n]):.2f}**" for n in names)
              + " |\n", flush=True)
