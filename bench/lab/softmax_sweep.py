"""Softmax / log-softmax sweep against jax.nn on the GPU (issue 4), with the copy ceiling and the masked case.

CUPTI kernel time (jax.experimental.mosaic.gpu.profiler.measure), median over N calls, N bounded by the
output size (the profiler keeps every output alive). Bytes = input read once + output written once.
Rows 49152 (24576 for 65536 columns); points under 100 MB are partly L2-warm (marked "L2").

  python bench/lab/softmax_sweep.py                 # full sweep + masked case + summary
  JK_SOFTMAX_CTA_THREADS=512 python bench/lab/softmax_sweep.py --ours-only --no-ceiling --no-mask --cols 16384
                                                    # one tier knob (read once per process)
"""
from __future__ import annotations

import argparse
import json
import math
import re
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.mosaic.gpu.profiler import measure

import jax_kernels as jk

COLS = [32, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16, "float16": jnp.float16}
OPS = {"softmax": (jk.softmax, jax.nn.softmax), "log_softmax": (jk.log_softmax, jax.nn.log_softmax)}


def iterations_for(out_bytes):
    return int(max(3, min(20, 24e9 // max(out_bytes, 1))))


def median_ms(f, *args, iters):
    _, ts = measure(f, iterations=iters)(*args)
    ts = [t for t in ts if t is not None]
    return float(np.median(ts)) if ts else float("nan")


def kernel_names(f, *args):
    _, ks = measure(f, aggregate=False)(*args)
    names = []
    for name, _ in ks or []:
        m = re.search(r"(WarpRowsKernel|BlockRowsKernel|TwoPassRowsKernel|ColumnsKernel)\D*(\w*)", name)
        names.append(m.group(1).replace("Kernel", "") if m else name[:24])
    return "+".join(names)


def copy_ceiling():
    x = jax.random.normal(jax.random.key(1), (1 << 28,), jnp.float32)  # 1 GiB
    f = jax.jit(lambda a: a * 1.0001)
    ms = median_ms(f, x, iters=5)
    del x
    return 2 * (1 << 30) / (ms * 1e-3) / 1e9


def sweep(args, ceiling):
    rows_out = []
    for op in args.ops:
        ours_fn, jax_fn = OPS[op]
        for dname in args.dtypes:
            dtype = DTYPES[dname]
            for cols in args.cols:
                rows = 24576 if cols == 65536 else 49152
                x = jax.random.normal(jax.random.key(cols), (rows, cols), dtype)
                nbytes = 2 * x.size * x.dtype.itemsize
                it = iterations_for(nbytes // 2)
                ours = jax.jit(lambda a: ours_fn(a))
                t_ours = median_ms(ours, x, iters=it)
                kern = kernel_names(ours, x) if args.kernels else ""
                t_jax = float("nan")
                if not args.ours_only:
                    t_jax = median_ms(jax.jit(lambda a: jax_fn(a)), x, iters=it)
                del x
                r = dict(op=op, dtype=dname, rows=rows, cols=cols, mb=nbytes / 1e6, jax_ms=t_jax, ours_ms=t_ours,
                         jax_gbs=nbytes / (t_jax * 1e-3) / 1e9, ours_gbs=nbytes / (t_ours * 1e-3) / 1e9,
                         ratio=t_jax / t_ours, kernel=kern)
                r["ceil_pct"] = 100 * r["ours_gbs"] / ceiling if ceiling else float("nan")
                rows_out.append(r)
                print(f"point {op} {dname} {cols} ours {r['ours_gbs']:.0f} GB/s jax {r['jax_gbs']:.0f} GB/s "
                      f"{r['ratio']:.2f}x {kern}", flush=True)
    return rows_out


def masked_case():
    b, s = 16, 2048
    x = jax.random.normal(jax.random.key(7), (b, s, s), jnp.bfloat16)
    mask = jnp.tril(jnp.ones((s, s), bool))
    ours = jax.jit(lambda a, m: jk.softmax(a, where=m))
    ref = jax.jit(lambda a, m: jax.nn.softmax(a, where=m))
    err = float(jnp.max(jnp.abs(ours(x, mask).astype(jnp.float32) - ref(x, mask).astype(jnp.float32))))
    t_o = median_ms(ours, x, mask, iters=20)
    t_j = median_ms(ref, x, mask, iters=20)
    nbytes = 2 * x.size * 2 + mask.size
    return dict(case="causal (16,2048,2048) bf16", jax_ms=t_j, ours_ms=t_o, ratio=t_j / t_o,
                ours_gbs=nbytes / (t_o * 1e-3) / 1e9, jax_gbs=nbytes / (t_j * 1e-3) / 1e9, max_abs_diff=err)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", nargs="+", default=list(OPS))
    ap.add_argument("--dtypes", nargs="+", default=list(DTYPES))
    ap.add_argument("--cols", nargs="+", type=int, default=COLS)
    ap.add_argument("--ours-only", action="store_true")
    ap.add_argument("--no-ceiling", action="store_true")
    ap.add_argument("--no-mask", action="store_true")
    ap.add_argument("--kernels", action="store_true", help="record which kernel ran (one extra call)")
    ap.add_argument("--json", help="also write every point as JSON lines to this file")
    args = ap.parse_args()
    t0 = time.time()
    print(jax.devices()[0].device_kind, "jax", jax.__version__, flush=True)
    ceiling = None if args.no_ceiling else copy_ceiling()
    if ceiling:
        print(f"copy ceiling (x*c over 1 GiB f32): {ceiling:.0f} GB/s", flush=True)
    res = sweep(args, ceiling)
    masked = None if args.no_mask else masked_case()
    if args.json:
        with open(args.json, "w") as f:
            for r in res + ([masked] if masked else []):
                f.write(json.dumps(r) + "\n")
    if args.ours_only:
        return
    print(f"\n== softmax sweep ({time.time() - t0:.0f}s)  ceiling {ceiling:.0f} GB/s")
    print(f"{'op':<11} {'dtype':<8} {'cols':>6} {'MB':>6} {'jax GB/s':>9} {'ours GB/s':>9} {'x':>5} {'%ceil':>5} kernel")
    for r in res:
        flag = "L2" if r["mb"] < 100 else ""
        print(f"{r['op']:<11} {r['dtype']:<8} {r['cols']:>6} {r['mb']:>6.0f} {r['jax_gbs']:>9.0f} {r['ours_gbs']:>9.0f} "
              f"{r['ratio']:>5.2f} {r['ceil_pct']:>5.0f} {r['kernel']} {flag}")
    ratios = [r["ratio"] for r in res if r["ratio"] == r["ratio"]]
    geo = math.exp(sum(math.log(v) for v in ratios) / len(ratios))
    worst = min(res, key=lambda r: r["ratio"])
    below = [f"{r['op']}/{r['dtype']}/{r['cols']}:{r['ceil_pct']:.0f}%" for r in res if r["mb"] > 100 and r["ceil_pct"] < 90]
    print(f"geomean {geo:.3f}x  min {worst['ratio']:.2f}x ({worst['op']} {worst['dtype']} {worst['cols']})  "
          f"points <1.0x: {sum(v < 1.0 for v in ratios)}  >100MB below 90% ceiling: {below or 'none'}")
    if masked:
        print(f"masked {masked['case']}: jax {masked['jax_ms']*1e3:.0f} us, ours {masked['ours_ms']*1e3:.0f} us, "
              f"{masked['ratio']:.2f}x, ours {masked['ours_gbs']:.0f} GB/s, max|diff| {masked['max_abs_diff']:.3g}")


if __name__ == "__main__":
    main()
