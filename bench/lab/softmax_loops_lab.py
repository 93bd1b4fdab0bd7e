"""Session 12: short softmax rows (the warp tier) with fewer blocks, each warp looping over several row groups
(lab knob JK_SOFTMAX_WARP_LOOPS = L, re-read at every launch: a grid of 1 / L of the blocks). At 49152 rows the
default grid is ~1.45 waves of resident blocks at 128 columns; L = 2, 3 trade the partial last wave for a loop.
Run once (bench/lab/s12_h200.md call 3, commit 5f5aadc): L = 1 (the default) was as fast or faster everywhere, so
the knob was removed after it; on later commits every L runs the default grid.

Method as softmax_long_lab.py: CUPTI kernel time (jax.experimental.mosaic.gpu.profiler.measure), median of 20
calls, the faster of two measurements (order reversed in the second), ours under every L and jnp in one process,
XLA command buffers off; every variant checked against float64 NumPy on sample rows.

  python bench/lab/softmax_loops_lab.py [--loops 1,2,3,4] [--cols 32,128,512] [--log OUT.jsonl]
"""
from __future__ import annotations

import argparse
import json
import os

if "command_buffer" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer=").strip()

import numpy as np

CEILING = 4274.0
TOL = {"float32": 1e-5, "bfloat16": 2e-2, "float16": 4e-3}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loops", default="1,2,3,4")
    ap.add_argument("--cols", default="32,128,512")
    ap.add_argument("--dtypes", default="bfloat16,float16,float32")
    ap.add_argument("--log", default=os.path.join(os.environ.get("OUT", "/tmp"), "loops_lab.jsonl"))
    a = ap.parse_args()
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic.gpu.profiler import measure

    import jax_kernels as jk
    from jax_kernels import reference

    loops = [int(v) for v in a.loops.split(",")]
    log = open(a.log, "a")
    for cols in [int(c) for c in a.cols.split(",")]:
        for dname in a.dtypes.split(","):
            for op in ("softmax", "log_softmax"):
                rows = 49152
                dtype = getattr(jnp, dname)
                x = jax.random.normal(jax.random.key(cols), (rows, cols), dtype)
                ours = jax.jit(getattr(jk, op))
                ref = jax.jit(getattr(reference, op))
                pick = np.array([0, 1, rows // 2, rows - 1])
                x64 = np.asarray(x[pick].astype(jnp.float32), np.float64)
                t = x64 - x64.max(-1, keepdims=True)
                ls = np.log(np.exp(t).sum(-1, keepdims=True))
                want = t - ls if op == "log_softmax" else np.exp(t - ls)
                nbytes = 2 * x.size * x.dtype.itemsize

                def timed(f):
                    _, ts = measure(f, iterations=20)(x)
                    return float(np.median([v for v in np.atleast_1d(ts) if v is not None]))

                names = ["jnp"] + [f"L{v}" for v in loops]
                res = {}
                for rep in range(2):
                    for name in (names if rep == 0 else names[::-1]):
                        if name == "jnp":
                            res.setdefault(name, []).append(timed(ref))
                            continue
                        os.environ["JK_SOFTMAX_WARP_LOOPS"] = name[1:]
                        res.setdefault(name, []).append(timed(ours))
                        if rep == 0:
                            y = np.asarray(ours(x)[pick].astype(jnp.float32), np.float64)
                            tol = TOL[dname]
                            res.setdefault("err:" + name, []).append(
                                float(np.max(np.abs(y - want) / (tol + tol * np.abs(want)))))
                os.environ.pop("JK_SOFTMAX_WARP_LOOPS", None)
                jnp_ms = min(res["jnp"])
                line = f"{op:11s} {dname:8s} {rows}x{cols:<5d} jnp {jnp_ms * 1e3:6.2f} us |"
                for name in names[1:]:
                    ms = min(res[name])
                    gbs = nbytes / (ms * 1e-3) / 1e9
                    rec = dict(op=op, dtype=dname, cols=cols, rows=rows, variant=name, ms=ms, jnp_ms=jnp_ms,
                               gbs=gbs, pct=100 * gbs / CEILING, ratio=jnp_ms / ms, err=res["err:" + name][0],
                               all_ms=res[name], all_jnp=res["jnp"])
                    log.write(json.dumps(rec) + "\n")
                    line += f" {name} {ms * 1e3:6.2f} {rec['ratio']:.3f}x e{rec['err']:.2g} |"
                print(line, flush=True)


if __name__ == "__main__":
    main()
