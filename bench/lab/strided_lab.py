"""Non-last-axis LayerNorm / RMSNorm / softmax lab: the scalar two-read kernels ("legacy", the previous
default), the register column-tile tier (cuda/common/column_tile.cuh) in each compiled configuration, the
current default and jnp, timed in ONE process on the GPU.

Method (/work/shared/reference/benchmarking.md): CUPTI kernel time per call (profiler.measure), median of 20
calls, two rounds in alternating order (reported: the lower of the two medians of each variant); bytes = x
read once + y written once; % of the copy ceiling measured in the same process (jitted x * c over 1 GiB
float32). Inputs random normal. Variants switch through JK_STRIDED_TILE read at every launch
(JK_STRIDED_TILE_DYNAMIC=1, XLA command buffers off). Correctness of every variant: float64 NumPy on sample
slabs (max |y - ref| / max(1, |ref|)).

  python bench/lab/strided_lab.py [--budget SECONDS] [--quick] [--out FILE]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
os.environ["JK_STRIDED_TILE_DYNAMIC"] = "1"
os.environ.pop("JK_STRIDED_TILE", None)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from norm_half_lab import lab_measure, lab_start, median_ms  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels import reference as ref  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
measure = lab_measure()
DT = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16}
TILES = ["2 4 1024", "2 8 1024", "2 16 512", "4 8 512", "4 16 512"]


def variants(shape):
    out = ["default", "legacy"] + TILES
    if shape[1] <= 2048:
        # a half or a quarter of each column per CTA of a cluster: smaller CTAs, more of them per SM
        out += ["2 4 1024 2", "2 8 1024 2", "2 8 1024 4", "2 16 512 2", "4 16 512 2"]
    return out


def set_tier(v):
    if v == "default":
        os.environ.pop("JK_STRIDED_TILE", None)
    else:
        os.environ["JK_STRIDED_TILE"] = v


def ref64(op, x, s, b, axis):
    x = np.asarray(x, np.float64)
    sh = [1] * x.ndim
    sh[axis] = x.shape[axis]
    if op == "layer_norm":
        mu = x.mean(axis, keepdims=True)
        y = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis, keepdims=True) + 1e-5)
        return y * np.asarray(s, np.float64).reshape(sh) + np.asarray(b, np.float64).reshape(sh)
    if op == "rms_norm":
        return x / np.sqrt((x * x).mean(axis, keepdims=True) + 1e-6) * np.asarray(s, np.float64).reshape(sh)
    m = x.max(axis, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis, keepdims=True)


def make(op, vmapped):
    if op == "layer_norm":
        o, t = (lambda x, s, b: jk.layer_norm(x, s, b, axis=1)), (lambda x, s, b: ref.layer_norm(x, s, b, axis=1))
    elif op == "rms_norm":
        o, t = (lambda x, s, b: jk.rms_norm(x, s, axis=1)), (lambda x, s, b: ref.rms_norm(x, s, axis=1))
    else:
        o, t = (lambda x, s, b: jk.softmax(x, axis=1)), (lambda x, s, b: jax.nn.softmax(x, axis=1))
    if vmapped:  # vmap over the outer dim with per-example scale/bias: axis 0 inside, grouped parameters
        if op == "layer_norm":
            o1, t1 = (lambda x, s, b: jk.layer_norm(x, s, b, axis=0)), (lambda x, s, b: ref.layer_norm(x, s, b, axis=0))
        elif op == "rms_norm":
            o1, t1 = (lambda x, s, b: jk.rms_norm(x, s, axis=0)), (lambda x, s, b: ref.rms_norm(x, s, axis=0))
        else:
            o1, t1 = (lambda x, s, b: jk.softmax(x, axis=0)), (lambda x, s, b: jax.nn.softmax(x, axis=0))
        o, t = jax.vmap(o1), jax.vmap(t1)
    return jax.jit(o), jax.jit(t)


def err(op, f, x, s, b, vmapped):
    pick = [0, x.shape[0] - 1]
    y = np.asarray(f(x, s, b)[np.array(pick)].astype(jnp.float32), np.float64)
    worst = 0.0
    for k, o in enumerate(pick):
        xs = np.asarray(x[o].astype(jnp.float32))[None]
        sk = s[o] if vmapped else s
        bk = b[o] if vmapped else b
        r = ref64(op, xs, np.asarray(sk.astype(jnp.float32)), np.asarray(bk.astype(jnp.float32)), 1)[0]
        worst = max(worst, float(np.max(np.abs(y[k] - r) / np.maximum(1.0, np.abs(r)))))
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=170.0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"), "strided_lab.txt"))
    a = ap.parse_args()
    t_end = time.time() + a.budget
    _, say, ceiling = lab_start(a.out, warm=20)  # (the module's own measure times the cases)

    big = ON_GPU and not a.quick
    # (shape, dtype, ops, vmapped): the benchmark case first
    cases = [((64, 2048, 1024), "bf16", False), ((64, 2048, 1024), "f32", False), ((64, 2048, 1024), "f16", False),
             ((8, 4096, 512), "bf16", False), ((256, 512, 256), "bf16", False), ((4, 32768, 128), "bf16", False),
             ((64, 2048, 1024), "bf16", True), ((8, 4096, 512), "f32", False), ((256, 512, 256), "f32", False),
             ((4, 32768, 128), "f32", False)]
    if not big:
        cases = [((4, 64, 32), d, v) for (_, d, v) in cases[:3]] + [((2, 4100, 16), "bf16", False)]
    summary = []
    for shape, dname, vmapped in cases:
        dt = DT[dname]
        k1, k2, k3 = jax.random.split(jax.random.key(shape[1] + len(dname)), 3)
        x = jax.random.normal(k1, shape, dt)
        pshape = (shape[0], shape[1]) if vmapped else (shape[1],)
        s = (1.0 + 0.1 * jax.random.normal(k2, pshape, jnp.float32)).astype(dt)
        b = (0.1 * jax.random.normal(k3, pshape, jnp.float32)).astype(dt)
        for op in ("layer_norm", "rms_norm", "softmax"):
            if time.time() > t_end:
                say(f"budget: skipped {op} {dname} {shape}")
                continue
            ours, theirs = make(op, vmapped)
            nbytes = 2 * x.nbytes
            vs = variants(shape)
            errs = {}
            for v in vs:
                set_tier(v)
                try:
                    errs[v] = err(op, ours, x, s, b, vmapped)
                except Exception as ex:  # noqa: BLE001
                    errs[v] = f"{type(ex).__name__}: {str(ex)[:120]}"
            errs["jnp"] = err(op, theirs, x, s, b, vmapped)
            set_tier("default")
            times = {v: [] for v in vs + ["jnp"]}
            for rnd in range(2 if shape == (64, 2048, 1024) else 1):
                seq = vs + ["jnp"]
                if rnd:
                    seq = seq[::-1]
                for v in seq:
                    if isinstance(errs.get(v), str):
                        continue
                    if v == "jnp":
                        times[v].append(median_ms(measure, theirs, (x, s, b), 20))
                    else:
                        set_tier(v)
                        times[v].append(median_ms(measure, ours, (x, s, b), 20))
            set_tier("default")
            best = {v: min(t) for v, t in times.items() if t}
            tj = best.get("jnp", float("nan"))
            tag = f"{op} {dname} {'x'.join(map(str, shape))}{' vmap' if vmapped else ''}"
            for v in vs + ["jnp"]:
                if v in best:
                    gbs = nbytes / (best[v] * 1e-3) / 1e9
                    say(f"  {tag:34s} {v:12s} {best[v]:8.4f} ms {gbs:6.0f} GB/s {100 * gbs / ceiling:4.0f}% "
                        f"{tj / best[v]:5.2f}x err {errs[v]:.1e}", quiet=True)
                else:
                    say(f"  {tag:34s} {v:12s} FAILED {errs.get(v)}")
            say(f"{tag}: " + " ".join(f"{v.replace(' ', '.')}={t:.4f}" for v, t in best.items()))
            tiles = {v: t for v, t in best.items() if v not in ("jnp", "default", "legacy")}
            win = min(tiles, key=tiles.get) if tiles else "-"
            summary.append((tag, best, win, nbytes, errs))
    say("\n==== strided_lab summary (ms; ratio = jnp / ours; %copy of the best tile)")
    say(f"{'case':34s} {'jnp':>7s} {'legacy':>7s} {'default':>7s} {'best tile':>14s} {'ms':>7s} {'%copy':>5s} "
        f"{'x jnp':>5s} {'maxerr':>7s}")
    for tag, best, win, nbytes, errs in summary:
        tw = best.get(win, float("nan"))
        gbs = nbytes / (tw * 1e-3) / 1e9 if win in best else float("nan")
        e = max([v for v in errs.values() if not isinstance(v, str)] or [float("nan")])
        say(f"{tag:34s} {best.get('jnp', float('nan')):7.4f} {best.get('legacy', float('nan')):7.4f} "
            f"{best.get('default', float('nan')):7.4f} {win:>14s} {tw:7.4f} {100 * gbs / ceiling:5.0f} "
            f"{best.get('jnp', float('nan')) / tw:5.2f} {e:7.1e}")


if __name__ == "__main__":
    main()
