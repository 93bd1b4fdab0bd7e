"""Long rows (16384-65536 columns) at the bandwidth limit: the ring tier (cuda/common/long_rows.cuh) against the
default dispatch and jnp, softmax / log_softmax and (with --norms) LayerNorm / RMSNorm, on the GPU.

One process: every variant is a value of JK_SOFTMAX_LONG / JK_NORM_LONG ("off" = the other tiers, "ring C U L"
= C CTAs per row, chunks of U * 8 KB, at least L ring slots for the next rows), which the launchers read at
every launch (XLA command buffers off, so each call launches anew). Per case: ours under each variant and
jnp (jax.nn / jax_kernels.reference) alternated, CUPTI kernel time (jax.experimental.mosaic.gpu.profiler),
median of up to 20 calls per measurement (fewer where 20 outputs would not fit in half the free
memory), the faster of two measurements; bytes = x read once + y written once; %copy of the 4274 GB/s H200 copy ceiling
(bench/results/h200/results.md); every variant checked on sample rows against float64 NumPy (err = max
|y - ref| / (tol + tol |ref|), <= 1 passes tests/conftest.py's tolerance).

  python bench/lab/softmax_long_lab.py [--norms] [--only-norms] [--quick] [--log FILE]
                                      [--case OP:DTYPE:COLS ...] [--ring NAME=C,U,L ...]
                                      [--cluster | --norm-cluster | --exchange | --stats | --stats14 | --smem14 | --hybrid]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

# The knobs are read at every launch: with XLA's command buffers a captured launch would replay the first one.
if "command_buffer" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer=").strip()

import numpy as np

CEILING = 4274.0
TOL = {"float32": 1e-5, "bfloat16": 1.6e-2, "float16": 2e-3}
RING = {"r1u4": "ring 1 4 3", "r1u2": "ring 1 2 6", "r1u2l4": "ring 1 2 4", "r2u4": "ring 2 4 3",
        "r4u4": "ring 4 4 3"}
# Session 8, --cluster: softmax's kClusterRowsRegisters (cuda/softmax/softmax_cluster.cuh) under
# JK_SOFTMAX_CLUSTER_ROWS = "E R" (E elements per thread, 64: 16-bit packed; R resident CTAs per SM, 0: a
# cluster per row, -1 (a): as many clusters as fit at once). The first run (bench/lab/s8_h200.md) also timed
# c32r1 ("32 1"), c32r4 ("32 4") and c16r2 ("16 2"), all slower.
CLUSTER = {"c32r2": "32 2", "c32ra": "32 -1", "c32r0": "32 0", "c64r2": "64 2", "c64ra": "64 -1", "c64r0": "64 0"}


# --norm-cluster: the norms' cluster tier (cuda/norm/norm_cluster.cu) under JK_NORM_CLUSTER ("F R", see there):
# "before" = off (the ring / two-read tiers of before), "ncdef" = the default rule (occupancy-sized grid),
# "nc0" = one cluster per row, "nc2" = 2 CTAs per SM.
NORM_CLUSTER = {"before": "off", "ncdef": None, "nc0": "0 0", "nc2": "0 2"}


# Session 10, --exchange: the cluster tiers' per-row exchange of statistics (common/cluster_exchange.cuh) under
# JK_CLUSTER_EXCHANGE: "xb" a cluster barrier per row (the tiers before), "xe" pushed into the peers' shared
# memory (st.async + mbarrier); for RMSNorm also its cluster tier forced ("nc": JK_NORM_CLUSTER "0 -1"; its
# default is the two-read tiers). Session 10's first run timed an L2 prefetch of the next row instead (commit
# c7e29c7, removed after: bench/lab/s10_h200.md).
EXCHANGE = {"xb": {"JK_CLUSTER_EXCHANGE": "0"}, "xe": {"JK_CLUSTER_EXCHANGE": "1"},
            "nc": {"JK_NORM_CLUSTER": "0 -1"}, "nc-xb": {"JK_NORM_CLUSTER": "0 -1", "JK_CLUSTER_EXCHANGE": "0"},
            "nc-xe": {"JK_NORM_CLUSTER": "0 -1", "JK_CLUSTER_EXCHANGE": "1"}}


# Session 11, --stats: how the packed 16-bit kernels and the cluster tiers get a row's statistics
# (softmax_kernels.cuh PackedStats, knob JK_SOFTMAX_STATS): "two" = the default before (16-bit block tier: the
# max then the sum, two block reductions; the cluster tiers: pairs), "pair" = each thread's (max, sum) merged
# once, "keep" = pairs and softmax keeps exp(x - the thread's max) in registers (one exponential per element);
# "c32" / "c32k" = 16-bit rows on clusters of 512 x 32 packed elements, three CTAs per SM (JK_SOFTMAX_CLUSTER_ROWS
# "32 -1"), without / with keep.
# ("two" was the unset default at commit 0d285cd, the first run; "def" = the default since, see StatsChoice.)
STATS = {"def": {}, "two": {"JK_SOFTMAX_STATS": "two"}, "pair": {"JK_SOFTMAX_STATS": "pair"},
         "keep": {"JK_SOFTMAX_STATS": "keep"},
         # session 14: bfloat16 softmax on the cluster tier scaling its kept exponentials on the packed pairs
         # (softmax_kernels.cuh PackedScaledFma)
         "keepfma": {"JK_SOFTMAX_STATS": "keepfma"},
         # float32 cluster rows with streaming cache hints (call 7, knob JK_SOFTMAX_STREAM at commit 65e32c2;
         # tied, removed since: a no-op now)
         "stream": {"JK_SOFTMAX_STREAM": "1"},
         "c32": {"JK_SOFTMAX_CLUSTER_ROWS": "32 -1"},
         "c32k": {"JK_SOFTMAX_CLUSTER_ROWS": "32 -1", "JK_SOFTMAX_STATS": "keep"}}


# Session 12, --hybrid: softmax rows past the block tier held partly in registers, partly in shared memory
# (softmax_cluster.cuh ClusterRowsHybridKernel, knob JK_SOFTMAX_HYBRID). Call 1 (commit 0c7b66d): "h1" = float32
# 8 + 8 packs per thread (registers + cp.async-staged), 16-bit 4 + 12; "h2" = float32 6 + 10, 16-bit 3 + 13; "def"
# = the cluster tier. Since: float32 only, "def" = 6 + 10 (was h2), "h0" = the cluster tier, "h3" = 4 + 12.
# The norms (norm_cluster.cuh ClusterRowsNormHybrid, knob JK_NORM_HYBRID): "nh1" = float32 6 + 10, 16-bit 4 + 12;
# "nh2" = float32 4 + 12, 16-bit 2 + 14; "def" = the default tiers.
# 16-bit softmax rows on the packed form (ClusterRowsHybridPackedKernel at commit f73c84d, call 7 of
# bench/lab/s12_h200.md; lost and removed after it, so these two are the default on later commits): "h4" = 8 + 8
# packs (65536: one CTA), "h5" = 6 + 10; "def" = the packed cluster tier.
HYBRID = {"def": {}, "h0": {"JK_SOFTMAX_HYBRID": "0"}, "h3": {"JK_SOFTMAX_HYBRID": "3"},
          "h4": {"JK_SOFTMAX_HYBRID": "4"}, "h5": {"JK_SOFTMAX_HYBRID": "5"},
          "nh1": {"JK_NORM_HYBRID": "1"}, "nh2": {"JK_NORM_HYBRID": "2"}}


# Session 14, --smem14: the norms' cluster kernel with its scale copied once into shared memory per persistent CTA
# (norm_cluster.cuh kSmemScale, knob JK_NORM_SMEM_SCALE): "def" = the default, "ss" = the scale in shared memory,
# "sl" = from L2. Call 6 timed def (= sl then) against ss; float32 LayerNorm's default is ss since.
SMEM14 = {"def": {}, "ss": {"JK_NORM_SMEM_SCALE": "1"}, "sl": {"JK_NORM_SMEM_SCALE": "0"}}


def hybrid_variants(op, dname="float32"):
    if op.endswith("norm"):
        return ["def", "nh1", "nh2"]
    return ["def", "h0", "h3"] if dname == "float32" else ["def", "h4", "h5"]


def stats_variants(op, dname, cols, session=11):
    if session == 14:  # bfloat16 softmax's packed scaling: call 1 timed def (= keep then) and keepfma; the
        # default since is keepfma, so later calls time def against keep
        return ["def", "keep"] if (op, dname) == ("softmax", "bfloat16") else ["def"]
    if dname == "float32":
        return ["def", "stream"]  # session 11 call 7; call 1 timed "two" (= def for float32) and "keep" here
    names = ["two", "pair"] + (["keep"] if op == "softmax" else [])
    if cols >= 32768:
        names += ["c32"] + (["c32k"] if op == "softmax" else [])
    return names


def exchange_variants(op, dname):
    """Session 10, second run: the exchange as the default ("xe"), and CTAs of 256 threads (clusters twice as
    wide, 4 CTAs per SM: "t256"); RMSNorm's float32 rows also on the cluster tier ("nc")."""
    e = "64" if dname != "float32" else "32"
    if op.endswith("norm"):
        EXCHANGE["t256"] = {"JK_NORM_CLUSTER": "0 -1 256"}
    else:
        EXCHANGE["t256"] = {"JK_SOFTMAX_CLUSTER_ROWS": f"{e} -1 256"}
    return ["xe", "t256"] + (["nc"] if op == "rms_norm" and dname == "float32" else [])


def cluster_variants(dname):
    return ["c32r2", "c32ra", "c32r0"] if dname == "float32" else ["c64r2", "c64ra", "c64r0", "c32r0"]


def rows_for(cols):
    return 24576 if cols >= 65536 else 49152


def variants(op, dname, cols):
    """The ring variants worth timing at this shape (the default 'off' is always timed)."""
    f32 = dname == "float32"
    if cols == 65536 and f32:
        return ["r1u4", "r1u2l4", "r2u4", "r4u4"]
    if cols == 65536 or (cols == 32768 and f32):
        return ["r1u4", "r1u2", "r2u4"]
    return ["r1u4", "r1u2"]


def cases(norms, softmax):
    out = []
    if norms:
        out += [("rms_norm", "float32", 65536), ("layer_norm", "float32", 65536)]
    if softmax:
        out += [(op, "float32", 32768) for op in ("softmax", "log_softmax")]
        out += [(op, d, 65536) for op in ("softmax", "log_softmax") for d in ("float32", "bfloat16", "float16")]
    if norms:
        out += [(op, d, 65536) for op in ("rms_norm", "layer_norm") for d in ("bfloat16", "float16")]
        out += [(op, "float32", c) for op in ("rms_norm", "layer_norm") for c in (32768, 16384)]
    if softmax:
        out += [(op, d, 32768) for op in ("softmax", "log_softmax") for d in ("bfloat16", "float16")]
        out += [(op, "float32", 16384) for op in ("softmax", "log_softmax")]
    return out


def ref64(op, x, scale, bias):
    if op in ("softmax", "log_softmax"):
        m = x.max(-1, keepdims=True)
        t = x - m
        s = np.exp(t).sum(-1, keepdims=True)
        return t - np.log(s) if op == "log_softmax" else np.exp(t) / s
    if op == "layer_norm":
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-5) * scale + bias
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * scale


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--norms", action="store_true")
    ap.add_argument("--only-norms", action="store_true")
    ap.add_argument("--quick", action="store_true", help="few rows and calls (a smoke run)")
    ap.add_argument("--dry", action="store_true", help="host timer instead of CUPTI (a CPU check of the script)")
    ap.add_argument("--log", default=os.path.join(os.environ.get("OUT", "/tmp"), "long_lab.jsonl"))
    ap.add_argument("--budget", type=float, default=1e9, help="seconds; stop starting cases after this")
    ap.add_argument("--case", action="append", default=[], metavar="OP:DTYPE:COLS",
                    help="only these cases (repeatable), e.g. rms_norm:float32:65536")
    ap.add_argument("--cluster", action="store_true", help="time the cluster-rows variants (softmax only)")
    ap.add_argument("--norm-cluster", action="store_true", help="time the norms' cluster tier variants")
    ap.add_argument("--exchange", action="store_true", help="time the cluster exchange variants (session 10)")
    ap.add_argument("--stats", action="store_true", help="time the statistics variants (session 11)")
    ap.add_argument("--stats14", action="store_true", help="time session 14's statistics variants (keepfma)")
    ap.add_argument("--smem14", action="store_true", help="time the norms' scale in shared memory (session 14)")
    ap.add_argument("--hybrid", action="store_true", help="time the hybrid register + shared rows (session 12)")
    ap.add_argument("--ring", action="append", default=[], metavar="NAME=C,U,L",
                    help="time these ring shapes instead of the per-case list (repeatable), e.g. r2u2=2,2,6")
    a = ap.parse_args()
    for spec in a.ring:
        name, cul = spec.split("=")
        RING[name] = "ring " + " ".join(cul.split(","))
    chosen = [(op, d, int(c)) for op, d, c in (k.split(":") for k in a.case)]

    import jax
    import jax.numpy as jnp
    if a.dry:
        def measure(f, iterations):
            def run(*args):
                ts = []
                for _ in range(iterations):
                    t = time.perf_counter()
                    jax.block_until_ready(f(*args))
                    ts.append((time.perf_counter() - t) * 1e3)
                return None, ts
            return run
    else:
        from jax.experimental.mosaic.gpu.profiler import measure

    import jax_kernels as jk
    from jax_kernels import reference

    t0 = time.time()
    iters = 3 if a.quick else 20
    ours_fn = {"softmax": jk.softmax, "log_softmax": jk.log_softmax, "layer_norm": jk.layer_norm,
               "rms_norm": jk.rms_norm}
    ref_fn = {"softmax": reference.softmax, "log_softmax": reference.log_softmax,
              "layer_norm": reference.layer_norm, "rms_norm": reference.rms_norm}
    log = open(a.log, "a")
    txt = open(a.log.rsplit(".", 1)[0] + ".txt", "a")
    table = []
    for op, dname, cols in chosen or cases(a.norms or a.only_norms, not a.only_norms):
        if time.time() - t0 > a.budget:
            print(f"budget: skipped {op} {dname} {cols}", flush=True)
            continue
        knob = "JK_NORM_LONG" if op.endswith("norm") else "JK_SOFTMAX_LONG"
        rows = 64 if a.quick else rows_for(cols)
        dtype = getattr(jnp, dname)
        k = jax.random.split(jax.random.key(cols + len(op)), 3)
        x = jax.random.normal(k[0], (rows, cols), dtype)
        args = [x]
        if op.endswith("norm"):
            args.append(jax.random.normal(k[1], (cols,), dtype))
        if op == "layer_norm":
            args.append(jax.random.normal(k[2], (cols,), dtype))
        nbytes = 2 * x.size * x.dtype.itemsize
        ours = jax.jit(ours_fn[op])
        ref = jax.jit(ref_fn[op])
        pick = np.array([0, 1, rows // 2, rows - 1])
        x64 = np.asarray(x[pick].astype(jnp.float32), np.float64)
        sc = np.asarray(args[1].astype(jnp.float32), np.float64) if len(args) > 1 else None
        bi = np.asarray(args[2].astype(jnp.float32), np.float64) if len(args) > 2 else None
        want = ref64(op, x64, sc, bi)
        tol = TOL[dname]

        # measure() keeps every call's output alive until it returns (20 outputs of 6.4 GB did not fit the
        # H200's 139 GB: the first GPU run of this lab ran out of memory), so the calls per measurement are
        # bounded by half the free memory, as jax_kernels/_bench/timing.py does.
        stats = jax.devices()[0].memory_stats() or {}
        free = stats.get("bytes_limit", 0) - stats.get("bytes_in_use", 0)
        calls = iters if free <= 0 else min(iters, max(3, int(0.5 * free // (nbytes // 2))))

        def timed(f):
            _, ts = measure(f, iterations=calls)(*args)
            ts = [t for t in np.atleast_1d(ts) if t is not None]
            return float(np.median(ts)) if ts else float("nan")

        res = {}
        if a.smem14:
            names = list(SMEM14)
        elif a.hybrid:
            names = hybrid_variants(op, dname)
        elif a.stats or a.stats14:
            names = stats_variants(op, dname, cols, 14 if a.stats14 else 11)
        elif a.exchange:
            names = exchange_variants(op, dname)
        elif a.norm_cluster:
            names = list(NORM_CLUSTER)
        elif a.cluster:
            names = ["off"] + cluster_variants(dname)
        else:
            names = ["off"] + ([spec.split("=")[0] for spec in a.ring] or variants(op, dname, cols))
        for rep in range(2):  # alternate: jnp, variants, then the reverse order
            order = ["jnp"] + names if rep == 0 else names[::-1] + ["jnp"]
            for name in order:
                if name == "jnp":
                    res.setdefault(name, []).append(timed(ref))
                    continue
                os.environ.pop("JK_SOFTMAX_CLUSTER_ROWS", None)
                os.environ.pop("JK_NORM_CLUSTER", None)
                os.environ.pop("JK_CLUSTER_EXCHANGE", None)
                os.environ.pop("JK_SOFTMAX_STATS", None)
                os.environ.pop("JK_SOFTMAX_STREAM", None)
                os.environ.pop("JK_SOFTMAX_HYBRID", None)
                os.environ.pop("JK_NORM_HYBRID", None)
                os.environ.pop("JK_NORM_SMEM_SCALE", None)
                if a.smem14:
                    os.environ.pop(knob, None)
                    os.environ.update(SMEM14[name])
                elif a.stats or a.stats14 or a.hybrid:
                    os.environ.pop(knob, None)
                    os.environ.update((HYBRID if a.hybrid else STATS)[name])
                elif name in EXCHANGE:
                    os.environ.pop(knob, None)
                    os.environ.update(EXCHANGE[name])
                elif name in NORM_CLUSTER:
                    os.environ.pop(knob, None)
                    if NORM_CLUSTER[name] is not None:
                        os.environ["JK_NORM_CLUSTER"] = NORM_CLUSTER[name]
                elif name in CLUSTER:
                    os.environ["JK_SOFTMAX_CLUSTER_ROWS"] = CLUSTER[name]
                    os.environ[knob] = "off"
                else:
                    os.environ[knob] = "off" if name == "off" else RING[name]
                try:
                    ms = timed(ours)
                    if rep == 0:
                        y = np.asarray(ours(*args)[pick].astype(jnp.float32), np.float64)
                        err = float(np.max(np.abs(y - want) / (tol + tol * np.abs(want))))
                        res.setdefault("err:" + name, []).append(err)
                except Exception as e:  # a failing variant must not stop the others
                    print(f"{op} {dname} {cols} {name}: {type(e).__name__}: {str(e)[:200]}", flush=True)
                    ms = float("nan")
                res.setdefault(name, []).append(ms)
        os.environ.pop(knob, None)
        os.environ.pop("JK_SOFTMAX_CLUSTER_ROWS", None)
        os.environ.pop("JK_NORM_CLUSTER", None)
        os.environ.pop("JK_CLUSTER_EXCHANGE", None)
        os.environ.pop("JK_SOFTMAX_STATS", None)
        os.environ.pop("JK_SOFTMAX_STREAM", None)
        os.environ.pop("JK_SOFTMAX_HYBRID", None)
        os.environ.pop("JK_NORM_HYBRID", None)
        os.environ.pop("JK_NORM_SMEM_SCALE", None)
        jnp_ms = float(np.nanmin(res["jnp"]))
        for name in names:
            ms = float(np.nanmin(res[name])) if not all(np.isnan(res[name])) else float("nan")
            gbs = nbytes / (ms * 1e-3) / 1e9
            rec = dict(op=op, dtype=dname, cols=cols, rows=rows, variant=name, ms=ms, jnp_ms=jnp_ms,
                       gbs=gbs, pct=100 * gbs / CEILING, ratio=jnp_ms / ms,
                       err=res.get("err:" + name, [float("nan")])[0], all_ms=res[name], all_jnp=res["jnp"])
            log.write(json.dumps(rec) + "\n")
            log.flush()
            table.append(rec)
            txt.write(f"{op:11s} {dname:8s} {rows}x{cols:<6d} {name:7s} {ms:7.4f} ms  jnp {jnp_ms:7.4f}  "
                      f"{gbs:5.0f} GB/s {rec['pct']:4.0f}%  {rec['ratio']:.2f}x  err {rec['err']:.2g}\n")
            txt.flush()
        del x, args
    print(f"\n== long rows lab: {time.time() - t0:.0f}s. Per case: jnp ms, then per variant ms/%copy/ratio(jnp/ours)"
          f"/err (err <= 1: within tolerance); off = current default")
    by = {}
    for r in table:
        by.setdefault((r["op"], r["dtype"], r["cols"]), []).append(r)
    for key, rs in by.items():
        cells = " | ".join(f"{r['variant']} {r['ms']:.3f} {r['pct']:.0f}% {r['ratio']:.2f}x e{r['err']:.1g}" for r in rs)
        short = {"float32": "f32", "bfloat16": "bf16", "float16": "f16"}[key[1]]
        print(f"{key[0][:7]} {short} {key[2]} jnp {rs[0]['jnp_ms']:.3f} | {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
