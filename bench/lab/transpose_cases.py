"""Issue 5's transpose cases: jax_kernels.transpose against jnp.transpose / jnp.swapaxes, CUPTI timing.

Method (shared/reference/benchmarking.md): jit both, time with the Mosaic GPU profiler's CUPTI `measure`
(kernel time only), median over the calls; each pair measured twice in alternation and the better
median of each kept (equal treatment, damps clock noise); bytes = input read once + output written
once; the copy ceiling is an elementwise `x * c` over 1 GiB float32 in the same process. Inputs are
random normal (ints: random integers). Cases under the 50 MB L2 are L2-warm (marked).
Prints a compact table and the verdict against the targets: >= 0.95x jnp everywhere, geomean >=
1.05x, >= 90% of copy for every case over 64 MB.

  python3 transpose_cases.py [--small] [--no-ceiling] [--copyref]
    --small       only the cases under the 50 MB L2 (the latency-bound ones)
    --no-ceiling  skip the 1 GiB copy-ceiling measurement
    --copyref     also time an elementwise `-x` of the same array (a same-size copy: what a streaming
                  kernel of the case's bytes reaches, launch and ramp included)
  JK_LAB_CASES="name@dtype;..." restricts the run to those cases (bench/lab/transpose_variants.py).
Cases under 64 MB are also checked against NumPy (np.transpose of the input, bit-exact).
Each case also prints one `ROW name|dtype|jk_us|jnp_us|ok` line for bench/lab/transpose_before_after.py,
which runs this script once per JK_TRANSPOSE_TIERS setting (one process per setting).
"""
from __future__ import annotations

import math
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.mosaic.gpu.profiler import measure

import jax_kernels as jk

L2_BYTES = 50e6


def cases():
    out = []
    for shape in [(2048, 512), (8192, 8192), (16384, 16384)]:
        for dt in (jnp.float32, jnp.bfloat16, jnp.int8):
            out.append((f"{shape[0]}x{shape[1]}", shape, dt, (1, 0), "transpose"))
    out.append(("4097x1023", (4097, 1023), jnp.float32, (1, 0), "transpose"))
    out.append(("64x1024x1024 swap", (64, 1024, 1024), jnp.float32, (0, 2, 1), "swapaxes"))
    out.append(("32x128x64x64 (0,2,1,3)", (32, 128, 64, 64), jnp.bfloat16, (0, 2, 1, 3), "transpose"))
    out.append(("8x16x32x64x2 (4,0,3,1,2)", (8, 16, 32, 64, 2), jnp.float32, (4, 0, 3, 1, 2), "transpose"))
    return out


def make_input(shape, dtype, key):
    if jnp.issubdtype(dtype, jnp.integer):
        return jax.random.randint(key, shape, -128, 127, dtype=jnp.int32).astype(dtype)
    return jax.random.normal(key, shape, jnp.float32).astype(dtype)


def median_ms(f, x, nbytes):
    iters = 20 if nbytes < 256e6 else (10 if nbytes < 1.1e9 else 5)  # outputs stay alive (lesson 3)
    _, ts = measure(f, iterations=iters)(x)
    return float(np.median(np.asarray(ts)))


def copy_ceiling():
    x = jax.random.normal(jax.random.key(1), (256 * 1024 * 1024,), jnp.float32)  # 1 GiB
    f = jax.jit(lambda t: t * 1.0001)
    ms = min(median_ms(f, x, 2 * x.nbytes) for _ in range(2))
    del x
    return 2 * 4 * 256 * 1024 * 1024 / (ms * 1e-3) / 1e9


def main():
    import os
    small_only = "--small" in sys.argv
    copyref = "--copyref" in sys.argv
    only = {c for c in os.environ.get("JK_LAB_CASES", "").split(";") if c}
    print(f"device: {jax.devices()[0].device_kind}; jax {jax.__version__}; "
          f"JK_TRANSPOSE_TIERS={os.environ.get('JK_TRANSPOSE_TIERS', '')!r}")
    copy_gbs = float("nan") if "--no-ceiling" in sys.argv else copy_ceiling()
    print(f"copy ceiling (x * c over 1 GiB float32): {copy_gbs:.0f} GB/s")
    rows, ratios, failures = [], [], []
    for i, (name, shape, dt, perm, kind) in enumerate(cases()):
        if small_only and 2 * math.prod(shape) * np.dtype(dt).itemsize >= L2_BYTES:
            continue
        if only and f"{name}@{np.dtype(dt).name}" not in only:
            continue
        x = make_input(shape, dt, jax.random.key(100 + i))
        ours = jax.jit(lambda t, p=perm: jk.transpose(t, p))
        if kind == "swapaxes":
            theirs = jax.jit(lambda t: jnp.swapaxes(t, -1, -2))
        else:
            theirs = jax.jit(lambda t, p=perm: jnp.transpose(t, p))
        ok = bool(jnp.array_equal(ours(x), theirs(x)))
        nbytes = 2 * x.nbytes
        if nbytes < 64e6:  # NumPy reference: bit-exact
            ok = ok and bool(np.array_equal(np.asarray(ours(x)), np.transpose(np.asarray(x), perm)))
        copy_us = float("nan")
        if copyref:
            neg = jax.jit(lambda t: -t)
            copy_us = 1e3 * min(median_ms(neg, x, nbytes) for _ in range(2))
        t_ours, t_theirs = [], []
        for _ in range(2):
            t_ours.append(median_ms(ours, x, nbytes))
            t_theirs.append(median_ms(theirs, x, nbytes))
        a, b = min(t_ours), min(t_theirs)
        gbs = nbytes / (a * 1e-3) / 1e9
        ratio = b / a
        ratios.append(ratio)
        big = nbytes > 64e6
        pct = 100 * gbs / copy_gbs
        flags = []
        if not ok:
            flags.append("WRONG")
        if ratio < 0.95:
            flags.append("<0.95x")
        if big and pct < 90:
            flags.append("<90%copy")
        if nbytes < L2_BYTES:
            flags.append("L2-warm")
        failures += [f"{name} {np.dtype(dt).name}: {f}" for f in flags if f != "L2-warm"]
        print(f"ROW {name}|{np.dtype(dt).name}|{a * 1e3:.3f}|{b * 1e3:.3f}|{int(ok)}|{copy_us:.3f}", flush=True)
        rows.append((name, np.dtype(dt).name, nbytes / 1e6, a * 1e3, b * 1e3, ratio, gbs,
                     nbytes / (b * 1e-3) / 1e9, pct, " ".join(flags)))
        del x
    print(f"COPY {copy_gbs:.1f}", flush=True)
    if not ratios:
        return 0
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print()
    print(f"{'case':26s} {'dtype':8s} {'MB':>7s} {'jk us':>8s} {'jnp us':>8s} {'ratio':>6s} "
          f"{'jk GB/s':>8s} {'jnp GB/s':>8s} {'%copy':>6s}  notes")
    for r in rows:
        print(f"{r[0]:26s} {r[1]:8s} {r[2]:7.1f} {r[3]:8.1f} {r[4]:8.1f} {r[5]:6.3f} {r[6]:8.0f} "
              f"{r[7]:8.0f} {r[8]:6.1f}  {r[9]}")
    print(f"geomean ratio (jnp time / jk time): {geo:.3f}   copy ceiling {copy_gbs:.0f} GB/s")
    if geo < 1.05:
        failures.append(f"geomean {geo:.3f} < 1.05")
    print("targets:", "all met" if not failures else "MISSED: " + "; ".join(failures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
