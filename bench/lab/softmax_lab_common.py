"""Shared machinery of the softmax labs (softmax_half_lab.py, softmax_short_lab.py): timing and checking of
the default dispatch against jnp, one subprocess per tier knob, and the report table. Each lab keeps its own
cases, variants and extra report lines and calls main() here.

A variant is name: (env, cols, dtypes): the environment the subprocess runs under, the columns and the
dtypes it times (intersected with the command line's)."""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

CEILING_GBS = 4299.0
ROWS = int(os.environ.get("LAB_ROWS", 49152))  # fewer for a dry run
DTYPES = ["bfloat16", "float16", "float32"]
OPS = ["softmax", "log_softmax"]
TOL = {"float32": 1e-5, "bfloat16": 1.6e-2, "float16": 2e-3}  # rtol = atol, as tests/conftest.py


def iterations_for(out_bytes):
    return int(max(5, min(20, 30e9 // max(out_bytes, 1))))


def median_ms(measure, f, x, iters):
    _, ts = measure(f, iterations=iters)(x)
    ts = [t for t in np.atleast_1d(ts) if t is not None]
    return float(np.median(ts)) if ts else float("nan")


def ref64(x64, log):
    m = x64.max(axis=-1, keepdims=True)
    t = x64 - m
    s = np.exp(t).sum(axis=-1, keepdims=True)
    return t - np.log(s) if log else np.exp(t) / s


def check_rows(x, y, log, dname):
    """Max error relative to the tolerance (<= 1: within tests/conftest.py's rtol/atol) on sample rows."""
    import jax.numpy as jnp
    pick = np.array([0, 1, 2, x.shape[0] // 2, x.shape[0] - 2, x.shape[0] - 1])
    x64 = np.asarray(x[pick].astype(jnp.float32), np.float64)
    y64 = np.asarray(y[pick].astype(jnp.float32), np.float64)
    want = ref64(x64, log)
    tol = TOL[dname]
    return float(np.max(np.abs(y64 - want) / (tol + tol * np.abs(want))))


def run_cases(cols_list, dtypes, ops, with_jnp, tag, skip=None):
    """skip(tag, cols, dname) -> True leaves that case out."""
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic.gpu.profiler import measure

    import jax_kernels as jk
    from jax_kernels import reference

    fns = {"softmax": (jk.softmax, reference.softmax), "log_softmax": (jk.log_softmax, reference.log_softmax)}
    out = []
    for cols in cols_list:
        for dname in dtypes:
            if skip is not None and skip(tag, cols, dname):
                continue
            dtype = getattr(jnp, dname)
            x = jax.random.normal(jax.random.key(cols), (ROWS, cols), dtype)
            nbytes = 2 * x.size * x.dtype.itemsize
            it = iterations_for(nbytes // 2)
            for op in ops:
                ours_fn, ref_fn = fns[op]
                ours = jax.jit(ours_fn)
                y = ours(x)
                err = check_rows(x, y, op == "log_softmax", dname)
                del y
                r = dict(tag=tag, op=op, dtype=dname, cols=cols, mb=nbytes / 1e6, err=err)
                # Alternate which runs first (a warm L2 or clock state favours neither).
                order = ["ours", "jnp"] if (cols + len(op)) % 2 == 0 else ["jnp", "ours"]
                for who in order:
                    if who == "jnp" and not with_jnp:
                        continue
                    f = ours if who == "ours" else jax.jit(ref_fn)
                    r[who + "_ms"] = median_ms(measure, f, x, it)
                    r[who + "_gbs"] = nbytes / (r[who + "_ms"] * 1e-3) / 1e9
                out.append(r)
                line = (f"case {tag} {op} {dname} {cols} ours {r['ours_gbs']:.0f} GB/s "
                        f"({100 * r['ours_gbs'] / CEILING_GBS:.0f}%)")
                if with_jnp:
                    line += f" jnp {r['jnp_gbs']:.0f} GB/s ratio {r['jnp_ms'] / r['ours_ms']:.2f}x"
                print(line + f" err/tol {err:.2f}", flush=True)
            del x
    return out


def child(args, skip=None):
    res = run_cases(args.cols, args.dtypes, args.ops, with_jnp=False, tag=args.child, skip=skip)
    for r in res:
        print("JSON " + json.dumps(r), flush=True)


def spawn(script, variants, name, cols, dtypes, ops, timeout):
    env_extra, default_cols, vdtypes = variants[name]
    cols = [c for c in default_cols if c in cols]
    if not cols:
        return []
    env = {**os.environ, **env_extra}
    cmd = [sys.executable, os.path.abspath(script), "--child", name, "--cols", *map(str, cols),
           "--dtypes", *[d for d in dtypes if d in vdtypes], "--ops", *ops]
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        print(f"variant {name}: timed out after {timeout}s", flush=True)
        text = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    else:
        text = p.stdout
        if p.returncode != 0:
            print(f"variant {name}: rc {p.returncode}\n{p.stderr[-1500:]}", flush=True)
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("JSON ")]


def main(script, title, variants, cols, skip=None, report=None):
    """script: the lab's __file__ (rerun as the variant subprocess); title: the report's heading;
    cols: the default --cols; skip: see run_cases; report(res, var): extra summary lines after the geomean."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--cols", nargs="+", type=int, default=cols)
    ap.add_argument("--dtypes", nargs="+", default=DTYPES)
    ap.add_argument("--ops", nargs="+", default=OPS)
    ap.add_argument("--variants", nargs="*", default=list(variants))
    ap.add_argument("--variant-timeout", type=int, default=60)
    ap.add_argument("--budget", type=float, default=1e9, help="seconds for the whole script (variants shrink)")
    ap.add_argument("--json", help="write every point as JSON lines here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args, skip)
    import jax
    t0 = time.time()
    print(jax.devices()[0].device_kind, "jax", jax.__version__, flush=True)
    res = run_cases(args.cols, args.dtypes, args.ops, with_jnp=True, tag="new", skip=skip)
    var = {}
    for name in args.variants:
        left = args.budget - (time.time() - t0) - 8
        if left < 10:
            print(f"variant {name}: skipped (budget)", flush=True)
            continue
        for r in spawn(script, variants, name, args.cols, args.dtypes, args.ops,
                       int(min(args.variant_timeout, left))):
            var[(name, r["op"], r["dtype"], r["cols"])] = r
    if args.json:
        with open(args.json, "w") as f:
            for r in res + list(var.values()):
                f.write(json.dumps(r) + "\n")

    print(f"\n== {title} ({time.time() - t0:.0f}s): GB/s (% of {CEILING_GBS:.0f}); ratio = jnp ms / "
          f"ours ms; err = max |y - ref| / (tol + tol |ref|) on 6 rows vs float64 (<= 1 passes)")
    names = [n for n in args.variants if any(k[0] == n for k in var)]
    head = f"{'op':<11} {'dtype':<8} {'cols':>5} {'jnp':>10} {'new':>10} {'ratio':>5} {'err':>4}"
    print(head + "".join(f" {n:>14}" for n in names))
    for r in res:
        line = (f"{r['op']:<11} {r['dtype']:<8} {r['cols']:>5} "
                f"{r['jnp_gbs']:>5.0f} ({100 * r['jnp_gbs'] / CEILING_GBS:>2.0f}%)"
                f"{r['ours_gbs']:>5.0f} ({100 * r['ours_gbs'] / CEILING_GBS:>2.0f}%) "
                f"{r['jnp_ms'] / r['ours_ms']:>5.2f} {r['err']:>4.2f}")
        for n in names:
            v = var.get((n, r["op"], r["dtype"], r["cols"]))
            line += (f" {v['ours_gbs']:>5.0f} x{r['jnp_ms'] / v['ours_ms']:.2f}"
                     + ("!" if v["err"] > 1 else " ")) if v else f" {'-':>14}"
        print(line + (" L2" if r["mb"] < 100 else ""))
    ratios = [r["jnp_ms"] / r["ours_ms"] for r in res]
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    bad = [f"{r['op']}/{r['dtype']}/{r['cols']}" for r in res if r["err"] > 1]
    print(f"geomean new vs jnp {geo:.3f}x over {len(ratios)} cases, min {min(ratios):.2f}x; "
          f"error over tolerance: {bad or 'none'}")
    if report is not None:
        report(res, var)
    for n in names:  # the variant's geomean over the cases it ran, against the same jnp times
        rs = [r["jnp_ms"] / var[(n, r["op"], r["dtype"], r["cols"])]["ours_ms"] for r in res
              if (n, r["op"], r["dtype"], r["cols"]) in var]
        print(f"  {n:<9} geomean vs jnp {math.exp(sum(map(math.log, rs)) / len(rs)):.3f}x over {len(rs)} cases")
