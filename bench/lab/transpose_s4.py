"""Session 4: every JK_TRANSPOSE_TIERS candidate against the default and jnp, in ONE process.

The launcher re-reads JK_TRANSPOSE_TIERS at every launch (transpose_launch.cu, Knobs), so with XLA
command buffers off (a captured graph would keep the setting it was captured with) one jit'd function
per case runs every setting: per case, per round (2 rounds, alternating), jnp then each setting in turn.
Method as transpose_cases.py: CUPTI kernel time (Mosaic GPU profiler `measure`), median of 20 calls
(10 past 256 MB, 5 past 1.1 GB), the better round kept; bytes = input once + output once; %copy against
`x * c` over 1 GiB float32 in the same process; every setting's result checked equal to jnp's and,
under 64 MB, to NumPy's np.transpose (bit-exact). Prints one row per (case, setting), then per case the
fastest setting, and the geomean (jnp / ours) of the default and of the per-case best.

  python3 transpose_s4.py [--quick]     (--quick: the small cases only)
"""
from __future__ import annotations

import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer=").strip()

import math  # noqa: E402
import sys  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transpose_cases as tc  # noqa: E402

import jax_kernels as jk  # noqa: E402

# Settings per case besides the default. The recorded run (bench/lab/transpose_s4_h200.md) timed the
# tree of commit 92e9782, whose tokens w0..w5 were six kTiledSmallCta geometries per element size, "nosmall",
# "rowp" and "row2"; the launcher keeps the fastest geometry per element size as "smallcta", "rowbulk", and
# "s3" (the session-3 dispatch: int8 over 32 MiB in the general flavour, which the default no longer uses).
SETTINGS = {
    "2048x512@float32": ["smallcta"],
    "2048x512@bfloat16": ["smallcta"],
    "2048x512@int8": ["smallcta"],
    "8x16x32x64x2 (4,0,3,1,2)@float32": ["smallcta"],
    "8192x8192@int8": ["s3"],
    "16384x16384@int8": ["s3"],
    "32x128x64x64 (0,2,1,3)@bfloat16": ["rowbulk"],  # session 14 also timed "fastdiv" here (lost, removed)
}


def main():
    quick = "--quick" in sys.argv
    print(f"device: {jax.devices()[0].device_kind}; jax {jax.__version__}", flush=True)
    ceiling = tc.copy_ceiling()
    print(f"copy ceiling (x * c over 1 GiB float32): {ceiling:.0f} GB/s", flush=True)
    best_ratios, default_ratios = [], []
    summary = []
    print(f"\n{'case':34s} {'setting':10s} {'ours us':>8s} {'jnp us':>7s} {'ratio':>6s} {'GB/s':>6s} {'%copy':>6s}")
    for i, (name, shape, dt, perm, kind) in enumerate(tc.cases()):
        key = f"{name}@{np.dtype(dt).name}"
        nbytes = 2 * math.prod(shape) * np.dtype(dt).itemsize
        if quick and nbytes >= tc.L2_BYTES:
            continue
        x = tc.make_input(shape, dt, jax.random.key(100 + i))
        ours = jax.jit(lambda t, p=perm: jk.transpose(t, p))
        if kind == "swapaxes":
            theirs = jax.jit(lambda t: jnp.swapaxes(t, -1, -2))
        else:
            theirs = jax.jit(lambda t, p=perm: jnp.transpose(t, p))
        settings = [""] + SETTINGS.get(key, [])
        ref = theirs(x)
        ref_np = np.transpose(np.asarray(x), perm) if nbytes < 64e6 else None
        ok = {}
        for s in settings:
            os.environ["JK_TRANSPOSE_TIERS"] = s
            y = ours(x)
            good = bool(jnp.array_equal(y, ref))
            if ref_np is not None:
                good = good and bool(np.array_equal(np.asarray(y), ref_np))
            ok[s] = good
            del y
        times = {s: [] for s in settings}
        t_jnp = []
        for _ in range(2):
            os.environ["JK_TRANSPOSE_TIERS"] = ""
            t_jnp.append(tc.median_ms(theirs, x, nbytes))
            for s in settings:
                os.environ["JK_TRANSPOSE_TIERS"] = s
                times[s].append(tc.median_ms(ours, x, nbytes))
        os.environ["JK_TRANSPOSE_TIERS"] = ""
        j = min(t_jnp) * 1e3
        best = None
        for s in settings:
            o = min(times[s]) * 1e3
            gbs = nbytes / (o * 1e-6) / 1e9
            print(f"{key:34s} {s or 'default':10s} {o:8.2f} {j:7.2f} {j / o:6.3f} {gbs:6.0f} "
                  f"{100 * gbs / ceiling:5.1f}%{'' if ok[s] else ' WRONG'}", flush=True)
            if ok[s] and (best is None or o < best[1]):
                best = (s, o)
        copy_us = float("nan")
        if nbytes > 64e6:  # a streaming kernel over the same bytes: what a copy of this size reaches
            c = jax.random.normal(jax.random.key(7), (nbytes // 8,), jnp.float32)
            f = jax.jit(lambda t: t * 1.0001)
            copy_us = 1e3 * min(tc.median_ms(f, c, nbytes) for _ in range(2))
            del c
            print(f"{key:34s} {'same-bytes x*c':14s} {copy_us:8.2f} us = "
                  f"{100 * nbytes / (copy_us * 1e-6) / 1e9 / ceiling:5.1f}% of the 1 GiB ceiling", flush=True)
        d = min(times[""]) * 1e3
        default_ratios.append(j / d)
        best_ratios.append(j / best[1])
        summary.append((key, nbytes, j, d, best, copy_us))
        del x, ref
    g = lambda r: math.exp(sum(map(math.log, r)) / len(r))  # noqa: E731
    print(f"\nbest per case (copy ceiling {ceiling:.0f} GB/s):")
    print(f"{'case':34s} {'jnp us':>7s} {'default':>8s} {'ratio':>6s} {'%copy':>6s}  {'best':10s} {'us':>8s} "
          f"{'ratio':>6s} {'%copy':>6s} {'copy us':>8s}")
    for key, nbytes, j, d, (s, o), copy_us in summary:
        pc = lambda t: 100 * nbytes / (t * 1e-6) / 1e9 / ceiling  # noqa: E731
        print(f"{key:34s} {j:7.2f} {d:8.2f} {j / d:6.3f} {pc(d):5.1f}%  {s or 'default':10s} {o:8.2f} "
              f"{j / o:6.3f} {pc(o):5.1f}% {copy_us:8.2f}")
    print(f"geomean jnp/ours: default {g(default_ratios):.3f}, per-case best {g(best_ratios):.3f} "
          f"over {len(summary)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
