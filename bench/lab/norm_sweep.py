"""LayerNorm / RMSNorm sweep against the jnp versions, plus the copy ceiling, on the default GPU.

Method (../shared/reference/benchmarking.md): CUPTI kernel time per call (profiler.measure), median of N
calls, N bounded so the outputs the profiler keeps alive fit in memory; bytes = x read once + y written
once (+ scale/bias); ratios against jax_kernels.reference (float32 statistics, the version a user writes)
measured in the same process; copy ceiling = jitted x * c over 1 GiB of float32. Points whose input fits
in L2 (< 50 MB) are L2-warm for both sides and marked '*'.

  python bench/lab/norm_sweep.py [--variants] [--quick] [--cols 384,768,1536]

--variants also times forced row tiers (JK_NORM_TIER) at the long-row points; command buffers are off in
this script so the tier read at each launch takes effect.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental.mosaic.gpu.profiler import measure  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels import reference as ref  # noqa: E402

COLS = [32, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
DTYPES = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16}
OPS = {
    "layer_norm": (lambda x, s, b: jk.layer_norm(x, s, b), lambda x, s, b: ref.layer_norm(x, s, b)),
    "rms_norm": (lambda x, s, b: jk.rms_norm(x, s), lambda x, s, b: ref.rms_norm(x, s)),
}
MEM_BUDGET = 12e9  # bytes of outputs the profiler may keep alive per measurement


def med_ms(f, args, out_bytes):
    iters = int(max(3, min(20, MEM_BUDGET // max(out_bytes, 1))))
    _, ts = measure(f, iterations=iters)(*args)
    ts = ts if isinstance(ts, (list, tuple)) else [ts]
    return float(np.median([t for t in ts if t is not None]))


def copy_ceiling():
    x = jax.random.normal(jax.random.key(1), (1 << 28,), jnp.float32)  # 1 GiB
    f = jax.jit(lambda x: x * jnp.float32(1.0001))
    jax.block_until_ready(f(x))
    t = med_ms(f, (x,), x.nbytes)
    return 2 * x.nbytes / (t * 1e-3) / 1e9


def inputs(rows, cols, dt, key=0):
    k1, k2, k3 = jax.random.split(jax.random.key(key), 3)
    x = jax.random.normal(k1, (rows, cols), dt)
    s = (1.0 + 0.1 * jax.random.normal(k2, (cols,), jnp.float32)).astype(dt)
    b = (0.1 * jax.random.normal(k3, (cols,), jnp.float32)).astype(dt)
    return x, s, b


def line(cells):
    return " ".join(cells)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cols", help="comma-separated row lengths instead of the issue's sweep (e.g. 384,768,1536)")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds; later optional parts are skipped")
    a = ap.parse_args()
    start = time.time()
    late = lambda: time.time() - start > a.deadline  # noqa: E731
    dev = jax.devices()[0]
    print(f"device: {dev.device_kind}  jax {jax.__version__}", flush=True)
    ceil = copy_ceiling()
    print(f"copy ceiling (x*c, 1 GiB f32): {ceil:.0f} GB/s", flush=True)

    rows_main = []
    cols_list = [int(c) for c in a.cols.split(",")] if a.cols else COLS[::3] if a.quick else COLS
    for opname, (ours, theirs) in OPS.items():
        for dname, dt in DTYPES.items():
            for cols in cols_list:
                rows = 24576 if cols == 65536 else 49152
                x, s, b = inputs(rows, cols, dt)
                nbytes = 2 * x.nbytes + (2 if opname == "layer_norm" else 1) * s.nbytes
                fo, ft = jax.jit(ours), jax.jit(theirs)
                yo, yt = fo(x, s, b), ft(x, s, b)
                err = float(jnp.max(jnp.abs(yo.astype(jnp.float32) - yt.astype(jnp.float32))))
                del yo, yt
                to = med_ms(fo, (x, s, b), x.nbytes)
                tt = med_ms(ft, (x, s, b), x.nbytes)
                gbo, gbt = nbytes / to / 1e6, nbytes / tt / 1e6
                warm = "*" if x.nbytes < 50e6 else " "
                rows_main.append((opname, dname, rows, cols, nbytes, to, tt, gbo, gbt, err))
                print(line([f"{opname:10s}", f"{dname:4s}", f"{rows:5d}x{cols:<5d}{warm}",
                            f"{nbytes / 1e6:8.1f}MB", f"ours {to * 1e3:8.1f}us {gbo:6.0f}GB/s",
                            f"jnp {tt * 1e3:8.1f}us {gbt:6.0f}GB/s", f"x{tt / to:5.2f}",
                            f"{100 * gbo / ceil:4.0f}%copy", f"maxdiff {err:.2g}"]), flush=True)
                del x, s, b

    # ---- summary (before the optional parts, so a time limit never loses it) ----
    print("\n==== norm sweep summary ====")
    print(f"device {dev.device_kind}; copy ceiling {ceil:.0f} GB/s; '*' = L2-warm (input < 50 MB)")
    print("op         dtype  cols   ours_GB/s jnp_GB/s speedup %copy")
    for opname, dname, rows, cols, nbytes, to, tt, gbo, gbt, err in rows_main:
        warm = "*" if nbytes / 2 < 50e6 else " "
        print(f"{opname:10s} {dname:5s} {cols:5d}{warm} {gbo:9.0f} {gbt:8.0f} {tt / to:7.2f} {100 * gbo / ceil:5.0f}")
    for opname in OPS:
        sp = [tt / to for o, _, _, _, _, to, tt, *_ in rows_main if o == opname]
        big = [(d, c, 100 * g / ceil) for o, d, _, c, nb, _, _, g, _, _ in rows_main if o == opname and nb > 100e6]
        low = [f"{d}/{c}:{p:.0f}%" for d, c, p in big if p < 90]
        slow = [f"{d}/{c}:{tt / to:.2f}" for o, d, _, c, _, to, tt, *_ in rows_main if o == opname and tt / to < 1.0]
        print(f"{opname}: geomean x{math.exp(np.mean(np.log(sp))):.3f}, min x{min(sp):.2f}; "
              f"<1.0x: {slow or 'none'}; >100MB below 90% copy: {low or 'none'}")

    extra = []
    # return_stats at no visible cost
    for dname in ("f32", "bf16"):
        for cols in (1024, 8192):
            x, s, b = inputs(49152, cols, DTYPES[dname])
            f0 = jax.jit(lambda x, s, b: jk.layer_norm(x, s, b))
            f1 = jax.jit(lambda x, s, b: jk.layer_norm(x, s, b, return_stats=True))
            jax.block_until_ready((f0(x, s, b), f1(x, s, b)))
            t0, t1 = med_ms(f0, (x, s, b), x.nbytes), med_ms(f1, (x, s, b), x.nbytes)
            extra.append(f"return_stats {dname} 49152x{cols}: {t0 * 1e3:.1f}us -> {t1 * 1e3:.1f}us "
                         f"({100 * (t1 / t0 - 1):+.1f}%)")
            print(extra[-1], flush=True)
    # non-last axis, against jnp on the same case
    for shape, axis, dname in [((4096, 8192), 0, "f32"), ((256, 1024, 128), 1, "bf16"),
                               ((64, 4096, 512), 1, "f32"), ((32768, 64, 16), 1, "bf16")]:
        if late():
            break
        dt = DTYPES[dname]
        x = jax.random.normal(jax.random.key(3), shape, dt)
        n = shape[axis]
        s = jnp.ones((n,), dt)
        fo = jax.jit(lambda x, s: jk.layer_norm(x, s, s, axis=axis))
        ft = jax.jit(lambda x, s: ref.layer_norm(x, s, s, axis=axis))
        err = float(jnp.max(jnp.abs(fo(x, s).astype(jnp.float32) - ft(x, s).astype(jnp.float32))))
        to, tt = med_ms(fo, (x, s), x.nbytes), med_ms(ft, (x, s), x.nbytes)
        gb = 2 * x.nbytes / to / 1e6
        extra.append(f"strided layer_norm {dname} {shape} axis={axis}: ours {to * 1e3:.1f}us ({gb:.0f}GB/s) "
                     f"jnp {tt * 1e3:.1f}us x{tt / to:.2f} maxdiff {err:.2g}")
        print(extra[-1], flush=True)
        del x

    if a.variants:
        variants = ["block 4 128 1", "block 4 256 1", "block 8 256 1", "block 4 512 1", "block 8 512 1",
                    "block 8 128 2", "block 4 256 2", "block 8 256 2", "block 8 512 2", "block 4 256 4",
                    "block 8 256 4", "block 8 512 4", "block 8 256 8", "tworeads 512"]
        for dname in ("f32", "bf16"):
            for cols in (2048, 4096, 8192, 16384, 32768, 65536):
                if late():
                    break
                rows = 24576 if cols == 65536 else 49152
                x, s, b = inputs(rows, cols, DTYPES[dname])
                f = jax.jit(lambda x, s, b: jk.layer_norm(x, s, b))
                yt = jax.jit(lambda x, s, b: ref.layer_norm(x, s, b))(x, s, b).astype(jnp.float32)
                nbytes = 2 * x.nbytes
                pack = 16 // x.dtype.itemsize
                res = []
                for v in ["default"] + variants:
                    parts = v.split()
                    if parts[0] == "block" and int(parts[1]) * int(parts[2]) * int(parts[3]) * pack < cols:
                        continue
                    if parts[0] == "block" and int(parts[1]) * int(parts[2]) * int(parts[3]) * pack > 4 * cols:
                        continue
                    if v == "default":
                        os.environ.pop("JK_NORM_TIER", None)
                    else:
                        os.environ["JK_NORM_TIER"] = v
                    y = f(x, s, b)
                    err = float(jnp.max(jnp.abs(y.astype(jnp.float32) - yt)))
                    del y
                    t = med_ms(f, (x, s, b), x.nbytes)
                    res.append((nbytes / t / 1e6, v, err))
                os.environ.pop("JK_NORM_TIER", None)
                res_s = " | ".join(f"{v.replace('block ', 'b').replace(' ', 'x')}:{g:.0f}"
                                   + (f"(ERR {e:.2g})" if e > 0.1 else "") for g, v, e in res)
                extra.append(f"variants LN {dname} {rows}x{cols}: {res_s}")
                print(extra[-1], flush=True)
                del x, s, b, yt



if __name__ == "__main__":
    sys.exit(main())
