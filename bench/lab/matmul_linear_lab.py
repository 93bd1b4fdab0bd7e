"""Session-4 lab for issue 6's fused epilogues: linear(x, w, bias, activation, residual) on the Hopper tier,
its schedules and gelu forms against the jnp composition, in one process.

Variants (environment variables the wgmma launcher reads at every launch; each variant is its own jitted
function):
  ours       the default dispatch
  coop_libm  the session-3 default: cooperative 128x256 tiles, activations in their libm forms (erff,
             tanhf, expf + IEEE division; JK_MATMUL_WGMMA_ACT=libm). In run 1 the knob applied them
             through a per-element switch, slower than the session-3 code (230.9 us against 210.7 in
             bench/results/h200/results.md); now one templated loop per activation, as that code.
  coop       cooperative schedule, the branch-free activations (GeluErfc, GeluTanh, Silu in
             cuda/matmul/matmul_epilogue.cuh)
  pp         ping-pong schedule (128x128 tiles alternating between the consumer warpgroups, so one's
             epilogue runs under the other's mainloop), GeluErfc
  pp_libm    ping-pong, libm activations
  pp_pf0/3   ping-pong with the fused epilogue's prefetch bits 0 (none) / 3 (+ L2 prefetch of residuals)
  *_tma      the fused epilogue through TMA stores from the fragment layout (JK_MATMUL_WGMMA_EPI=tma)
  pp_row8    ping-pong through StoreRow8 (JK_MATMUL_WGMMA_EPI=row8)
  xla        the jnp composition (jax_kernels.reference.linear / jnp.matmul)
CUPTI kernel time (jax.experimental.mosaic.gpu.profiler.measure), median of 20 calls (10 at 8192^3),
random normal inputs (w scaled by 1/sqrt(K) for linear, as the benchmark). err = max |out - ref| / max |ref|
over 96 rows against float64 NumPy. Then the activation tails: x @ I (exact) + 0 over x in [-13, 13],
per-element relative error against float64, and how many outputs differ from the correctly rounded bf16
of the float64 value.

Usage: python bench/lab/matmul_linear_lab.py [filter[,filter...]]   (on the GPU machine; "tail": the tails)
       python bench/lab/matmul_linear_lab.py --cpu-gelu      (float32 emulation of GeluErfc vs float64)
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

VARIANTS = {
    "ours": {},
    "coop_libm": {"JK_MATMUL_WGMMA_SCHED": "coop", "JK_MATMUL_WGMMA_ACT": "libm"},
    "coop": {"JK_MATMUL_WGMMA_SCHED": "coop"},
    "pp": {"JK_MATMUL_WGMMA_SCHED": "pingpong"},
    "pp_libm": {"JK_MATMUL_WGMMA_SCHED": "pingpong", "JK_MATMUL_WGMMA_ACT": "libm"},
    "pp_pf0": {"JK_MATMUL_WGMMA_SCHED": "pingpong", "JK_MATMUL_WGMMA_PREFETCH": "0"},
    "pp_pf3": {"JK_MATMUL_WGMMA_SCHED": "pingpong", "JK_MATMUL_WGMMA_PREFETCH": "3"},
    "coop_tma": {"JK_MATMUL_WGMMA_SCHED": "coop", "JK_MATMUL_WGMMA_EPI": "tma"},
    "pp_tma": {"JK_MATMUL_WGMMA_SCHED": "pingpong", "JK_MATMUL_WGMMA_EPI": "tma"},
    "pp_tma_libm": {"JK_MATMUL_WGMMA_SCHED": "pingpong", "JK_MATMUL_WGMMA_EPI": "tma", "JK_MATMUL_WGMMA_ACT": "libm"},
    "pp_tma_pf3": {"JK_MATMUL_WGMMA_SCHED": "pingpong", "JK_MATMUL_WGMMA_EPI": "tma", "JK_MATMUL_WGMMA_PREFETCH": "3"},
    "pp_row8": {"JK_MATMUL_WGMMA_SCHED": "pingpong", "JK_MATMUL_WGMMA_EPI": "row8"},
    # session 17: the general TMA-store epilogue (the boxed form, now the default where it applies, off)
    "pp_tma0": {"JK_MATMUL_WGMMA_SCHED": "pingpong", "JK_MATMUL_WGMMA_EPI": "tma", "JK_MATMUL_WGMMA_BOXED": "0"},
}

# name, dtype name, (M, N, K), activation ("mm": plain matmul), bias, residual, variants besides ours/xla
FULL = ("coop_libm", "coop", "pp_row8", "pp_libm", "coop_tma", "pp_tma", "pp_tma_libm", "pp_tma0")
SHORT = ("coop_libm", "coop", "pp_row8", "coop_tma", "pp_tma")
CASES = [  # most telling first: a run cut short still reports them
    ("linear bf16 4096^3 +bias gelu", "bfloat16", (4096, 4096, 4096), "gelu", True, False, FULL),
    ("linear bf16 4096^3 +bias gelu +res", "bfloat16", (4096, 4096, 4096), "gelu", True, True,
     FULL + ("pp_pf3", "pp_tma_pf3")),
    ("bf16 4096^3 matmul", "bfloat16", (4096, 4096, 4096), "mm", False, False, ()),
    ("linear bf16 4096^3 +bias", "bfloat16", (4096, 4096, 4096), None, True, False, SHORT),
    ("linear bf16 4096^3 +bias silu", "bfloat16", (4096, 4096, 4096), "silu", True, False, SHORT),
    ("linear bf16 4096^3 +bias gelu_tanh", "bfloat16", (4096, 4096, 4096), "gelu_tanh", True, False, SHORT),
    ("linear bf16 4096^3 +bias relu +res", "bfloat16", (4096, 4096, 4096), "relu", True, True, SHORT),
    ("linear f16 4096^3 +bias gelu", "float16", (4096, 4096, 4096), "gelu", True, False, SHORT),
    ("linear bf16 8192^3 +bias gelu", "bfloat16", (8192, 8192, 8192), "gelu", True, False,
     ("coop_libm", "coop", "pp_row8", "coop_tma", "pp_tma")),
    ("linear bf16 2048^3 +bias gelu", "bfloat16", (2048, 2048, 2048), "gelu", True, False, ("coop", "coop_tma", "pp_tma")),
    ("linear bf16 2048x4096x4096 +bias gelu", "bfloat16", (2048, 4096, 4096), "gelu", True, False, ("coop", "pp_row8", "pp_tma")),
]


def gelu64(y):
    return y * 0.5 * np.vectorize(math.erfc)(-y / math.sqrt(2))


def act64(name, y):
    if name in (None, "mm"):
        return y
    if name == "relu":
        return np.maximum(y, 0)
    if name == "gelu":
        return gelu64(y)
    if name == "gelu_tanh":  # y sigmoid(2u): 1 + tanh(u) cancels in float64 too for u << 0
        return y / (1 + np.exp(-2 * math.sqrt(2 / math.pi) * (y + 0.044715 * y ** 3)))
    if name == "silu":
        return y / (1 + np.exp(-y))
    raise AssertionError(name)


# ---- float32 emulation of GeluErfc (no GPU): fma rounds once, rcp/exp correctly rounded ----------------
_ERFC = [0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418, 0.37409196,
         1.00002368, -1.26551223]


def gelu_erfc_f32(v):
    """GeluErfc's base-2 form step by step in float32 (fma rounds once; rcp/ex2 correctly rounded here,
    ~1-2 ulp on the GPU's MUFU)."""
    f = np.float32
    fma = lambda a, b, c: (np.asarray(a, np.float64) * b + c).astype(f)  # noqa: E731
    log2e = 1.4426950408889634
    v = v.astype(f)
    a = np.abs(v)
    t = (f(1) / fma(a, f(0.35355339059327373), 1.0)).astype(f)
    k = [f(np.float32(c) * f(log2e)) for c in _ERFC]
    k[-1] = f(f(np.float32(_ERFC[-1]) * f(log2e)) - f(1))
    q = np.full_like(v, k[0])
    for c in k[1:]:
        q = fma(q, t, np.float64(c))
    e = np.exp2(fma((a * f(-0.5 * log2e)).astype(f), a, q).astype(np.float64)).astype(f)
    half = (t * e).astype(f)
    return (v * np.where(v >= 0, (f(1) - half).astype(f), half)).astype(f)


def cpu_gelu_check():
    rng = np.random.default_rng(0)
    print("| x range | max rel err GeluErfc (f32 emulation) vs float64 |")
    print("|---|---:|")
    for lo, hi in [(-1, 1), (-3, 3), (-8, -3), (3, 8), (-13, -8), (8, 20)]:
        v = rng.uniform(lo, hi, 200_000).astype(np.float32)
        r = gelu64(v.astype(np.float64))
        a = gelu_erfc_f32(v).astype(np.float64)
        m = np.abs(r) > 1e-37
        print(f"| [{lo}, {hi}] | {np.max(np.abs(a - r)[m] / np.abs(r[m])):.2e} |")


# ---- GPU ---------------------------------------------------------------------------------------------
def main():
    import jax
    import jax.numpy as jnp

    import jax_kernels as jk
    from jax_kernels import reference as ref

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from matmul_wgmma_lab import median_ms, sample_rows

    # Comma-separated substrings of case names ("tail": the activation tails); empty: everything.
    flts = (sys.argv[1] if len(sys.argv) > 1 else "").split(",")
    flt = flts[0] if len(flts) == 1 else "+".join(flts)
    print(f"device: {jax.devices()[0].device_kind}", flush=True)
    f64 = lambda x: np.asarray(jnp.asarray(x, jnp.float32), np.float64)  # noqa: E731

    def fn(kind, act, has_bias, has_res):
        if act == "mm":
            return jax.jit(jnp.matmul if kind == "xla" else jk.matmul)
        lin = ref.linear if kind == "xla" else jk.linear
        if has_res:
            return jax.jit(lambda a, b, c, r: lin(a, b, c, activation=act, residual=r))
        return jax.jit(lambda a, b, c: lin(a, b, c, activation=act))

    table = []
    key = jax.random.key(0)
    for name, dt, (m, n, k), act, has_bias, has_res, extra in CASES:
        if not any(f in name for f in flts):
            continue
        dtype = jnp.dtype(dt)
        ka, kb, kc, kr, key = jax.random.split(key, 5)
        a = jax.random.normal(ka, (m, k), jnp.float32).astype(dtype)
        b = (jax.random.normal(kb, (k, n), jnp.float32) / (np.sqrt(k) if act != "mm" else 1.0)).astype(dtype)
        args = (a, b)
        if act != "mm":
            args += (jax.random.normal(kc, (n,), jnp.float32).astype(dtype),)
        if has_res:
            args += (jax.random.normal(kr, (m, n), jnp.float32).astype(dtype),)
        rows = sample_rows(m)
        r64 = f64(a[rows]) @ f64(b)
        if act != "mm":
            r64 = act64(act, r64 + f64(args[2]))
        if has_res:
            r64 = r64 + f64(args[3][rows])
        iters = 10 if m * n * k >= 8192 ** 3 else 20
        res = {}
        for kind in ("ours",) + extra + ("xla",):
            env = VARIANTS.get(kind, {})
            os.environ.update(env)
            try:
                f = fn(kind, act, has_bias, has_res)
                out = f64(f(*args)[rows])
                err = float(np.max(np.abs(out - r64)) / np.max(np.abs(r64)))
                res[kind] = (median_ms(f, args, iters), err)
            except Exception as ex:  # one broken variant must not hide the others
                print(f"{name} {kind}: FAILED {type(ex).__name__}: {str(ex)[:300]}", flush=True)
                res[kind] = (float("nan"), float("nan"))
            finally:
                for v in env:
                    os.environ.pop(v, None)
        print(name, {kk: (round(v[0] * 1e3, 1), f"{v[1]:.1e}") for kk, v in res.items()}, flush=True)
        table.append((name, 2.0 * m * n * k, res))
        del a, b, args

    # Activation tails on the wgmma tier: x @ I is exact in float32, so the output is act(x) rounded to bf16.
    tails = []
    if not flt or "tail" in flts:
        xs = np.concatenate([np.linspace(-13.0, 13.0, 256 * 512 - 4096), np.linspace(-1.0, 1.0, 4096)])
        x = jnp.asarray(xs.reshape(512, 256), jnp.bfloat16)
        eye = jnp.eye(256, dtype=jnp.bfloat16)
        zero = jnp.zeros((256,), jnp.bfloat16)
        xv = f64(x)
        for act in ("gelu", "gelu_tanh", "silu"):
            want = act64(act, xv)
            want_bf16 = f64(jnp.asarray(want, jnp.float32).astype(jnp.bfloat16))
            for kind, env in (("coop", VARIANTS["coop"]), ("pp_row8", VARIANTS["pp_row8"]),
                              ("coop_tma", VARIANTS["coop_tma"]), ("pp_tma", VARIANTS["pp_tma"]),
                              ("coop_libm", VARIANTS["coop_libm"]), ("mma tier", {"JK_MATMUL_WGMMA": "0"}),
                              ("xla", None)):
                os.environ["JK_MATMUL_WGMMA"] = "1"
                os.environ.update(env or {})
                try:
                    lin = ref.linear if env is None else jk.linear
                    out = f64(jax.jit(lambda a, b, c: lin(a, b, c, activation=act))(x, eye, zero))
                    m = np.abs(want) >= 1.2e-38  # bf16 normal range
                    rel = np.abs(out - want)[m] / np.abs(want[m])
                    neg = m & (xv < -4)
                    tails.append((f"{act} {kind}", float(rel.max()),
                                  float((np.abs(out - want)[neg] / np.abs(want[neg])).max()),
                                  int(np.sum(out != want_bf16)), out.size))
                except Exception as ex:
                    print(f"tail {act} {kind}: FAILED {type(ex).__name__}: {str(ex)[:300]}", flush=True)
                finally:
                    for v in (env or {}):
                        os.environ.pop(v, None)
                    os.environ.pop("JK_MATMUL_WGMMA", None)

    print("\nus; jnp/x > 1: x beats the jnp composition; err = max|out-ref|/max|ref| (96 rows vs float64)")
    print("| case | variant | us | TFLOP/s | jnp us | jnp/x | err | err jnp |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, flop, res in table:
        x, ex = res["xla"]
        for kind, (t, e) in res.items():
            if kind != "xla":
                print(f"| {name} | {kind} | {t * 1e3:.1f} | {flop / (t * 1e-3) / 1e12:.0f} | {x * 1e3:.1f} "
                      f"| {x / t:.3f}x | {e:.1e} | {ex:.1e} |")
    if tails:
        print("\nact(x) for x in [-13, 13] (x @ I + 0, bf16, wgmma tier unless 'mma tier'): per-element relative"
              " error vs float64 where |act(x)| >= 1.2e-38; 'off' = outputs other than the correctly rounded bf16")
        print("| variant | max rel err | max rel err x < -4 | off / n |")
        print("|---|---:|---:|---:|")
        for kind, r, rn, off, size in tails:
            print(f"| {kind} | {r:.2e} | {rn:.2e} | {off} / {size} |")


if __name__ == "__main__":
    if "--cpu-gelu" in sys.argv:
        cpu_gelu_check()
    else:
        main()
