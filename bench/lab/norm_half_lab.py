"""The 16-bit / short-row norm lab: the current dispatch against the previous one and jnp, on the GPU.

Method (../shared/reference/benchmarking.md): CUPTI kernel time per call (profiler.measure), median of N
calls (N <= 20, bounded so the outputs the profiler keeps alive fit in memory); bytes = x read once + y
written once + scale (+ bias); % of the copy ceiling (4299 GB/s on H200, and the x * c ceiling measured in
the same process); jnp = jax_kernels.reference (float32 statistics) timed in the same process right after
ours. Correctness: float64 NumPy on 70 sample rows (edges, stage-ring boundaries of the persistent tiers,
random rows), max |y - ref| / max(1, |ref|) against a per-dtype bound.

The variants run in separate worker processes, because the launcher reads JK_NORM_TIER once per process:
  new     the dispatch as built (env unset)
  old     JK_NORM_TIER=old: the dispatch before the bulk-copy tier and the early parameter loads (A/B)
  bulk*   JK_NORM_TIER="bulk S B M": the bulk tier forced wherever a row fits (S stages, B threads,
          <= M CTAs per SM; 0 = default), at 1024-16384 columns

  python bench/lab/norm_half_lab.py [--budget SECONDS] [--quick]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
import zlib

COLS = [32, 128, 1024, 2048, 4096, 8192, 16384]
ROWS = 49152
DTYPES = ["f32", "bf16", "f16"]
OPS = ["layer_norm", "rms_norm"]
STRIDED = (64, 2048, 1024)  # axis=1, bf16
CEILING = 4299.0            # GB/s, x * c over 1 GiB f32 on H200 (bench/results/h200)
MEM_BUDGET = 30e9           # bytes of outputs the profiler may keep alive per measurement
BULK_VARIANTS = ["bulk 0 0 0", "bulk 0 128 0", "bulk 0 512 0", "bulk 2 256 0", "bulk 0 256 2"]


# ---------------------------------------------------------------------------------------------- worker
def worker(name: str, cases: list, with_jnp: bool, deadline: float):
    import jax
    import jax.numpy as jnp
    import numpy as np
    if jax.default_backend() == "gpu":
        from jax.experimental.mosaic.gpu.profiler import measure
    else:  # --dry on a CPU: host timer, for checking the script only
        def measure(f, iterations):
            def run(*args):
                ts = []
                for _ in range(iterations):
                    t0 = time.perf_counter()
                    jax.block_until_ready(f(*args))
                    ts.append((time.perf_counter() - t0) * 1e3)
                return None, ts
            return run

    import jax_kernels as jk
    from jax_kernels import reference as ref

    dts = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16}
    tol = {"f32": 2e-5, "bf16": 2e-2, "f16": 4e-3}

    def med_ms(f, args, out_bytes):
        iters = int(max(3, min(20, MEM_BUDGET // max(out_bytes, 1))))
        _, ts = measure(f, iterations=iters)(*args)
        ts = ts if isinstance(ts, (list, tuple)) else [ts]
        return float(np.median([t for t in ts if t is not None]))

    def emit(**kw):
        print("JSON " + json.dumps(dict(variant=name, **kw)), flush=True)

    for op, dname, shape, axis in cases:
        if time.time() > deadline:
            emit(skipped=True, op=op, dtype=dname, shape=shape)
            continue
        dt = dts[dname]
        n = shape[axis]
        k1, k2, k3 = jax.random.split(jax.random.key(zlib.crc32(f"{op}{dname}{shape}".encode())), 3)
        x = jax.random.normal(k1, shape, dt)
        s = (1.0 + 0.1 * jax.random.normal(k2, (n,), jnp.float32)).astype(dt)
        b = (0.1 * jax.random.normal(k3, (n,), jnp.float32)).astype(dt)
        if op == "layer_norm":
            ours = jax.jit(lambda x, s, b: jk.layer_norm(x, s, b, axis=axis))
            theirs = jax.jit(lambda x, s, b: ref.layer_norm(x, s, b, axis=axis))
            nbytes = 2 * x.nbytes + 2 * s.nbytes
        else:
            ours = jax.jit(lambda x, s, b: jk.rms_norm(x, s, axis=axis))
            theirs = jax.jit(lambda x, s, b: ref.rms_norm(x, s, axis=axis))
            nbytes = 2 * x.nbytes + s.nbytes
        y = ours(x, s, b)
        # float64 check on sample rows (rows of the normalised axis moved last)
        xm = jnp.moveaxis(x, axis, -1).reshape(-1, n)
        ym = jnp.moveaxis(y, axis, -1).reshape(-1, n)
        r = xm.shape[0]
        rng = np.random.default_rng(0)
        pick = sorted({0, 1, 2, r // 2, r - 2, r - 1, *[min(r - 1, k) for k in (395, 396, 527, 528, 1055, 1056,
                                                                               3167, 3168, 4223, 4224)],
                       *rng.integers(0, r, 50).tolist()})
        xs = np.asarray(xm[np.array(pick)].astype(jnp.float32), np.float64)
        ys = np.asarray(ym[np.array(pick)].astype(jnp.float32), np.float64)
        sf = np.asarray(s.astype(jnp.float32), np.float64)
        bf = np.asarray(b.astype(jnp.float32), np.float64)
        if op == "layer_norm":
            mu = xs.mean(-1, keepdims=True)
            e = (xs - mu) / np.sqrt(((xs - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * sf + bf
        else:
            e = xs / np.sqrt((xs ** 2).mean(-1, keepdims=True) + 1e-6) * sf
        err = float(np.max(np.abs(ys - e) / np.maximum(1.0, np.abs(e))))
        del y, xm, ym
        t_ours = med_ms(ours, (x, s, b), x.nbytes)
        t_jnp = med_ms(theirs, (x, s, b), x.nbytes) if with_jnp else None
        emit(op=op, dtype=dname, shape=list(shape), axis=axis, bytes=nbytes, ours_ms=t_ours, jnp_ms=t_jnp,
             err=err, ok=bool(err <= tol[dname]))
        del x, s, b


def cases_for(variant: str, quick: bool, dry: bool = False):
    if dry:
        return [(op, d, (300, c), 1) for op in OPS for d in DTYPES for c in (32, 1024, 4096)] + [
            ("layer_norm", "bf16", (4, 64, 8), 1)]
    # Most important first (a worker stops at its deadline): 16-bit rows of 1024-16384, then short rows,
    # then float32 (not to regress), then the non-last-axis case.
    cols = COLS[1::2] if quick else COLS
    order = [(d, c) for d in ("bf16", "f16") for c in cols if c >= 1024]
    order += [(d, c) for c in cols if c < 1024 for d in DTYPES]
    order += [("f32", c) for c in cols if c >= 1024]
    out = []
    for d, c in order:
        for op in OPS:
            if variant.startswith("bulk"):
                isz = 4 if d == "f32" else 2
                if c < 1024 or c * isz > 32768:
                    continue
            out.append((op, d, (ROWS, c), 1))
    if not variant.startswith("bulk"):
        for op in OPS:  # the non-last-axis tier
            out.append((op, "bf16", STRIDED, 1))
    return out


# ---------------------------------------------------------------------------------------------- driver
def run_worker(variant: str, env_value, quick: bool, with_jnp: bool, seconds: float, dry: bool = False):
    env = dict(os.environ)
    env.pop("JK_NORM_TIER", None)
    if env_value is not None:
        env["JK_NORM_TIER"] = env_value
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", variant, "--deadline", str(time.time() + seconds)]
    if quick:
        cmd.append("--quick")
    if dry:
        cmd.append("--dry")
    if with_jnp:
        cmd.append("--jnp")
    res = []
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=seconds + 30)
        out, rc = p.stdout, p.returncode
        errtail = p.stderr[-1500:]
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        rc, errtail = "timeout", ""
    for line in out.splitlines():
        if line.startswith("JSON "):
            res.append(json.loads(line[5:]))
    print(f"[{variant}] {len(res)} results, rc={rc}, {time.time() - t0:.0f}s", flush=True)
    if rc not in (0,) and errtail:
        print(errtail, flush=True)
    return res


def case_key(r):
    return (r["op"], r["dtype"], tuple(r["shape"]))


def label(r):
    sh = r["shape"]
    return f"{sh[0]}x{sh[1]}" if len(sh) == 2 else "x".join(map(str, sh)) + " ax1"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("--deadline", type=float, default=1e18)
    ap.add_argument("--jnp", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dry", action="store_true", help="tiny cases, any backend: checks the script")
    ap.add_argument("--budget", type=float, default=240, help="seconds for the whole lab")
    a = ap.parse_args()
    if a.worker:
        variant = a.worker
        worker(variant, cases_for(variant, a.quick, a.dry), a.jnp, a.deadline)
        return 0

    start = time.time()
    left = lambda: a.budget - (time.time() - start)  # noqa: E731
    new = run_worker("new", None, a.quick, True, min(left() * 0.5, 120), a.dry)
    old = run_worker("old", "old", a.quick, False, min(left() * 0.55, 80), a.dry)
    variants = {}
    for v in BULK_VARIANTS:
        if left() < 25:
            break
        variants[v] = run_worker(v, v, a.quick, False, min(left() - 5, 40), a.dry)

    newd = {case_key(r): r for r in new if not r.get("skipped")}
    oldd = {case_key(r): r for r in old if not r.get("skipped")}
    gbs = lambda r, k="ours_ms": r["bytes"] / r[k] / 1e6  # noqa: E731
    print("\n==== norm_half_lab: new dispatch vs old dispatch vs jnp (H200, CUPTI median, GB/s; "
          f"% of {CEILING:.0f}; '*' = input < 50 MB, L2-warm) ====")
    print(f"{'op':10s} {'dt':4s} {'case':17s} {'old':>6s} {'new':>6s} {'jnp':>6s} {'old%':>5s} {'new%':>5s} "
          f"{'old/jnp':>7s} {'new/jnp':>7s} {'new/old':>7s} {'relerr':>8s}")
    ratios = {op: [] for op in OPS}
    for k, r in newd.items():
        o = oldd.get(k)
        g_new, g_jnp = gbs(r), gbs(r, "jnp_ms")
        g_old = gbs(o) if o else float("nan")
        warm = "*" if r["bytes"] / 2 < 50e6 else " "
        ratios[r["op"]].append(r["jnp_ms"] / r["ours_ms"])
        print(f"{r['op']:10s} {r['dtype']:4s} {label(r) + warm:17s} {g_old:6.0f} {g_new:6.0f} {g_jnp:6.0f} "
              f"{100 * g_old / CEILING:5.0f} {100 * g_new / CEILING:5.0f} "
              f"{(r['jnp_ms'] / o['ours_ms']) if o else float('nan'):7.2f} {r['jnp_ms'] / r['ours_ms']:7.2f} "
              f"{(o['ours_ms'] / r['ours_ms']) if o else float('nan'):7.2f} {r['err']:8.1e}"
              + ("" if r["ok"] else "  ERR"))
    for op, rs in ratios.items():
        if rs:
            print(f"{op}: new/jnp geomean {math.exp(sum(map(math.log, rs)) / len(rs)):.3f}, min {min(rs):.2f}")
    if variants:
        print("\n==== forced bulk-tier variants, GB/s (new = dispatch as built; ERR = failed f64 check) ====")
        names = list(variants)
        print(f"{'op':10s} {'dt':4s} {'case':12s} {'old':>6s} {'new':>6s} " + " ".join(f"{v[5:]:>9s}" for v in names))
        vd = {v: {case_key(r): r for r in rs if not r.get("skipped")} for v, rs in variants.items()}
        keys = [k for k in newd if any(k in vd[v] for v in names)]
        for k in keys:
            r = newd[k]
            o = oldd.get(k)
            cells = []
            for v in names:
                q = vd[v].get(k)
                cells.append(f"{gbs(q):9.0f}" + ("!" if q and not q["ok"] else "") if q else f"{'-':>9s}")
            print(f"{r['op']:10s} {r['dtype']:4s} {label(r):12s} {gbs(o) if o else float('nan'):6.0f} "
                  f"{gbs(r):6.0f} " + " ".join(cells))
    bad = [label(r) + " " + r["op"] + " " + r["dtype"] for rs in [new, old, *variants.values()] for r in rs
           if not r.get("skipped") and not r["ok"]]
    print("f64 check failures:", bad or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
