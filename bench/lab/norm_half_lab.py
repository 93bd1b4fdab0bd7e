"""The 16-bit / short-row norm lab: the current dispatch against the previous one and jnp, on the GPU.

Method (../shared/reference/benchmarking.md): CUPTI kernel time per call (profiler.measure), median of N
calls (N <= 20, bounded so the outputs the profiler keeps alive fit in memory); bytes = x read once + y
written once + scale (+ bias); % of the copy ceiling (4299 GB/s on H200, and the x * c ceiling measured in
the same process); jnp = jax_kernels.reference (float32 statistics) timed in the same process right after
ours. Correctness: float64 NumPy on 70 sample rows (edges, stage-ring boundaries of the persistent tiers,
random rows), max |y - ref| / max(1, |ref|) against a per-dtype bound.

The variants run in separate worker processes, because the launcher reads JK_NORM_TIER once per process:
  default   the dispatch as built (env unset), and jnp in the same process
  proposed  JK_NORM_TIER=proposed: the candidate dispatch (bulk-copy tier for rows of <= 32 KB beyond
            the lane groups; scale/bias loaded with x in short rows)
  block-lean  JK_NORM_TIER=block-lean: the default dispatch, its register tier with the lean output pass
  bulk*     JK_NORM_TIER="bulk S B M": the bulk tier forced wherever a row fits (S stages, B threads,
            <= M CTAs per SM; 0 = default), at 1024-16384 columns
A case that raises is reported (error) and the worker goes on; a CUDA error can leave later cases of the
same worker failing too (the launcher reports the last CUDA error).

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
BULK_VARIANTS = ["block-lean", "bulk 0 0 0", "bulk 0 512 0", "bulk 0 128 0", "bulk 2 256 0", "bulk 0 256 2"]


def host_measure(f, iterations):
    """profiler.measure's interface on the host clock (ms per call): a CPU dry run checks the script only."""
    import jax

    def run(*args):
        ts = []
        for _ in range(iterations):
            t0 = time.perf_counter()
            jax.block_until_ready(f(*args))
            ts.append((time.perf_counter() - t0) * 1e3)
        return None, ts
    return run


def lab_measure():
    """CUPTI kernel time (profiler.measure) on a GPU, else host_measure."""
    import jax
    if jax.default_backend() == "gpu":
        from jax.experimental.mosaic.gpu.profiler import measure
        return measure
    return host_measure


def rel_error(x_rows, y_rows, s, b, op):
    """max |y - ref| / max(1, |ref|) over the rows, ref: LayerNorm (eps 1e-5) / RMSNorm (eps 1e-6) in float64
    NumPy with scale s (and bias b)."""
    import jax.numpy as jnp
    import numpy as np
    xs = np.asarray(x_rows.astype(jnp.float32), np.float64)
    ys = np.asarray(y_rows.astype(jnp.float32), np.float64)
    sf = np.asarray(s.astype(jnp.float32), np.float64)
    bf = np.asarray(b.astype(jnp.float32), np.float64)
    if op == "layer_norm":
        mu = xs.mean(-1, keepdims=True)
        e = (xs - mu) / np.sqrt(((xs - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * sf + bf
    else:
        e = xs / np.sqrt((xs ** 2).mean(-1, keepdims=True) + 1e-6) * sf
    return float(np.max(np.abs(ys - e) / np.maximum(1.0, np.abs(e))))


def median_ms(measure, f, args, iters):
    """Median of iters timed calls of f(*args), in ms."""
    import numpy as np
    _, ts = measure(f, iterations=iters)(*args)
    ts = ts if isinstance(ts, (list, tuple)) else [ts]
    return float(np.median([t for t in ts if t is not None]))


def lab_log(path):
    """say(line, quiet=False): the line printed (unless quiet) and appended to the log file at path."""
    log = open(path, "w")

    def say(line, quiet=False):  # quiet: the log file only (a device reply keeps the last 12,000 characters)
        if not quiet:
            print(line, flush=True)
        log.write(line + "\n")
        log.flush()
    return say


def copy_ceiling(measure, warm=0):
    """GB/s of x * c over a 1 GiB float32 array (64 KiB off a GPU), median of 20 timed calls after `warm` untimed."""
    import jax
    import jax.numpy as jnp
    x1 = jax.random.normal(jax.random.key(1), ((1 << 28) if jax.default_backend() == "gpu" else (1 << 16),),
                           jnp.float32)
    fc = jax.jit(lambda x: x * jnp.float32(1.0001))
    for _ in range(warm):
        jax.block_until_ready(fc(x1))
    return 2 * x1.nbytes / (median_ms(measure, fc, (x1,), 20) * 1e-3) / 1e9


def lab_start(path, warm=0):
    """(measure, say, ceiling) for a one-process lab: the timer, its log (lab_log), the copy ceiling, logged."""
    import jax
    measure = lab_measure()
    say = lab_log(path)
    ceiling = copy_ceiling(measure, warm)
    say(f"copy ceiling {ceiling:.0f} GB/s ({jax.devices()[0].device_kind})")
    return measure, say, ceiling


def lab_inputs(shape, dt):
    """x ~ N(0, 1) of `shape`, scale ~ 1 + N(0, 0.1) and bias ~ N(0, 0.1) over shape[1], all in dt (keyed by shape[1])."""
    import jax
    import jax.numpy as jnp
    k1, k2, k3 = jax.random.split(jax.random.key(shape[1]), 3)
    x = jax.random.normal(k1, shape, dt)
    s = (1.0 + 0.1 * jax.random.normal(k2, (shape[1],), jnp.float32)).astype(dt)
    b = (0.1 * jax.random.normal(k3, (shape[1],), jnp.float32)).astype(dt)
    return x, s, b


def rotated_rounds(measure, use, variants, args, iters, rounds=3):
    """{variant: [median ms of each round]}: use(v) sets variant v up and returns its function; round r starts with
    the r-th variant, so no variant always runs first."""
    variants = list(variants)
    times = {v: [] for v in variants}
    for rnd in range(rounds):
        k = rnd % len(variants)
        for v in variants[k:] + variants[:k]:
            times[v].append(median_ms(measure, use(v), args, iters))
    return times


# ---------------------------------------------------------------------------------------------- worker
def worker(name: str, cases: list, with_jnp: bool, deadline: float):
    import jax
    import jax.numpy as jnp
    import numpy as np
    measure = lab_measure()  # --dry on a CPU: host timer, for checking the script only

    import jax_kernels as jk
    from jax_kernels import reference as ref

    dts = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16}
    tol = {"f32": 2e-5, "bf16": 2e-2, "f16": 4e-3}

    def med_ms(f, args, out_bytes):
        return median_ms(measure, f, args, int(max(3, min(20, MEM_BUDGET // max(out_bytes, 1)))))

    def emit(**kw):
        print("JSON " + json.dumps(dict(variant=name, **kw)), flush=True)

    # Warm-up (a fresh process on an idle GPU starts at low clocks) and this process's copy ceiling.
    try:
        on_gpu = jax.default_backend() == "gpu"
        xc = jax.random.normal(jax.random.key(1), ((1 << 28) if on_gpu else (1 << 16),), jnp.float32)  # 1 GiB
        fc = jax.jit(lambda x: x * jnp.float32(1.0001))
        for _ in range(30):
            jax.block_until_ready(fc(xc))
        emit(ceiling=2 * xc.nbytes / (med_ms(fc, (xc,), xc.nbytes) * 1e-3) / 1e9)
        del xc
    except Exception as e:  # noqa: BLE001
        emit(ceiling=None, error=f"{type(e).__name__}: {str(e)[:160]}")

    for op, dname, shape, axis in cases:
        try:
            if time.time() > deadline:
                emit(skipped=True, op=op, dtype=dname, shape=list(shape))
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
            err = rel_error(xm[np.array(pick)], ym[np.array(pick)], s, b, op)
            del y, xm, ym
            t_ours = med_ms(ours, (x, s, b), x.nbytes)
            t_jnp = med_ms(theirs, (x, s, b), x.nbytes) if with_jnp else None
            emit(op=op, dtype=dname, shape=list(shape), axis=axis, bytes=nbytes, ours_ms=t_ours, jnp_ms=t_jnp,
                 err=err, ok=bool(err <= tol[dname]))
            del x, s, b
        except Exception as e:  # noqa: BLE001 - report and go on
            emit(op=op, dtype=dname, shape=list(shape), axis=axis, error=f"{type(e).__name__}: {str(e)[:160]}")


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
            if variant.startswith(("bulk", "block")):
                isz = 4 if d == "f32" else 2
                if c < 1024 or c * isz > 32768:
                    continue
            out.append((op, d, (ROWS, c), 1))
    if not variant.startswith(("bulk", "block")):
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
    runs = {"default": run_worker("default", None, a.quick, True, min(left() * 0.45, 120), a.dry)}
    runs["proposed"] = run_worker("proposed", "proposed", a.quick, True, min(left() * 0.6, 120), a.dry)
    for v in BULK_VARIANTS:
        if left() < 25:
            break
        runs[v] = run_worker(v, v, a.quick, False, min(left() - 5, 40), a.dry)

    def table(rs):
        return {case_key(r): r for r in rs if "op" in r and not r.get("skipped") and "error" not in r}

    d, pr = table(runs["default"]), table(runs["proposed"])
    ceil = {v: next((r["ceiling"] for r in rs if r.get("ceiling")), None) for v, rs in runs.items()}
    gbs = lambda r, k="ours_ms": r["bytes"] / r[k] / 1e6 if r and r.get(k) else float("nan")  # noqa: E731
    ratio = lambda a_, b_: a_ / b_ if a_ and b_ else float("nan")  # noqa: E731
    print("\n==== per-case records ====")
    for v, rs in runs.items():
        for r in rs:
            if "op" in r and ("error" in r or r.get("skipped")):
                print(f"[{v}] {r['op']} {r['dtype']} {r['shape']}: {r.get('error', 'skipped')}")
    print("\n==== norm_half_lab: default dispatch vs JK_NORM_TIER=proposed vs jnp (CUPTI median GB/s; % of "
          f"{CEILING:.0f}; copy ceiling measured per process: {ceil}; '*' = input < 50 MB, L2-warm) ====")
    print(f"{'op':10s} {'dt':4s} {'case':17s} {'dflt':>6s} {'prop':>6s} {'jnp':>6s} {'dflt%':>5s} {'prop%':>5s} "
          f"{'dflt/jnp':>8s} {'prop/jnp':>8s} {'prop/dflt':>9s} {'relerr':>8s}")
    keys = list(dict.fromkeys(list(d) + list(pr)))
    ratios = {"default": {op: [] for op in OPS}, "proposed": {op: [] for op in OPS}}
    for k in keys:
        r, q = d.get(k), pr.get(k)
        base = r or q
        rd = ratio(r and r["jnp_ms"], r and r["ours_ms"])
        rp = ratio(q and q["jnp_ms"], q and q["ours_ms"])
        if rd == rd:
            ratios["default"][base["op"]].append(rd)
        if rp == rp:
            ratios["proposed"][base["op"]].append(rp)
        warm = "*" if base["bytes"] / 2 < 50e6 else " "
        bad = [f"{v}:ERR" for v, x in (("dflt", r), ("prop", q)) if x and not x["ok"]]
        print(f"{base['op']:10s} {base['dtype']:4s} {label(base) + warm:17s} {gbs(r):6.0f} {gbs(q):6.0f} "
              f"{gbs(r or q, 'jnp_ms'):6.0f} {100 * gbs(r) / CEILING:5.0f} {100 * gbs(q) / CEILING:5.0f} "
              f"{rd:8.2f} {rp:8.2f} {ratio(r and r['ours_ms'], q and q['ours_ms']):9.2f} "
              f"{(q or r)['err']:8.1e} {' '.join(bad)}")
    for v, per_op in ratios.items():
        for op, rs in per_op.items():
            if rs:
                print(f"{v} {op}: x/jnp geomean {math.exp(sum(map(math.log, rs)) / len(rs)):.3f}, min {min(rs):.2f} "
                      f"over {len(rs)} cases")
    names = [v for v in runs if v.startswith(("bulk", "block"))]
    if names:
        print("\n==== variants: block-lean, and the bulk tier forced as 'S B M' (stages, threads, CTAs/SM; "
              "0 = default), GB/s; ! = f64 check failed ====")
        print(f"{'op':10s} {'dt':4s} {'case':12s} {'dflt':>6s} {'prop':>6s} "
              + " ".join(f"{v.replace('bulk ', ''):>10s}" for v in names))
        vd = {v: table(runs[v]) for v in names}
        for k in keys:
            if not any(k in vd[v] for v in names):
                continue
            base = d.get(k) or pr.get(k)
            cells = []
            for v in names:
                q = vd[v].get(k)
                cells.append(f"{gbs(q):9.0f}" + ("!" if not q["ok"] else " ") if q else f"{'-':>10s}")
            print(f"{base['op']:10s} {base['dtype']:4s} {label(base):12s} {gbs(d.get(k)):6.0f} {gbs(pr.get(k)):6.0f} "
                  + " ".join(cells))
    bad = [f"{v}: {label(r)} {r['op']} {r['dtype']}" for v, rs in runs.items() for r in rs
           if "op" in r and "ok" in r and not r["ok"]]
    print("f64 check failures:", bad or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
