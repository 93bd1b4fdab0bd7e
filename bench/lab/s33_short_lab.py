"""Session 33: norm rows of 6 and 12 packs (16-bit 48 / 96 columns, float32 24 / 48) on the packed short-row tier,
new in this session (norm_short.cu), and float32 96 (24 packs) with 3 packs a lane and 2 rows a group, against the
default dispatch and jnp; then the default alone at other short rows off the sweep (80 ... 640 columns) to find gaps.
49152 rows, 3 rounds in one process, each round starting one variant later; the benchmark's timer (CUPTI median of
10 calls), parameters as jit arguments, XLA command buffers off (JK_NORM_TIER is re-read at every launch). Also the
largest error of each variant against a float32 jnp reference of the same inputs.

  [S33_SET=first|odd] python bench/lab/s33_short_lab.py
"""
import os

os.environ["JK_NORM_TIER_DYNAMIC"] = "1"
os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels import reference as ref  # noqa: E402
from jax_kernels._bench.timing import Timer, describe_device  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
ROWS = 49152 if ON_GPU else 7
rng = np.random.default_rng(0)
TIMER = Timer(describe_device(), iterations=10, min_time_s=0.25)
ROUNDS = 3 if ON_GPU else 1
NEW = ["default", "packed 3 1", "packed 3 2", "packed 6 1"]
CASES = {}
if os.environ.get("S33_SET", "first") == "first":  # call 1
    for op in ("layer_norm", "rms_norm"):
        for dt in ("bfloat16", "float16"):
            CASES[(op, dt, 96)] = NEW
            CASES[(op, dt, 48)] = NEW
        CASES[(op, "float32", 48)] = NEW
        CASES[(op, "float32", 24)] = NEW
        CASES[(op, "float32", 96)] = NEW
    for op in ("layer_norm", "rms_norm"):
        for dt in ("bfloat16", "float32"):
            for n in (80, 160, 320, 640):
                CASES[(op, dt, n)] = ["default"]
else:  # S33_SET=odd (call 2): rows of 10 / 20 / 40 packs (5 a lane) and 14 / 28 / 56 (7 a lane), new in call 2
    for op in ("layer_norm", "rms_norm"):
        for dt, cols in (("bfloat16", (80, 160, 320, 112, 224, 448)), ("float16", (80, 160, 320)),
                         ("float32", (40, 80, 160, 56, 112, 224))):
            for n in cols:
                c = 5 if (n * (2 if dt != "float32" else 4) // 16) % 5 == 0 else 7
                CASES[(op, dt, n)] = ["default", f"packed {c} 1"]


def timed(tier, f, args):
    if tier == "default":
        os.environ.pop("JK_NORM_TIER", None)
    else:
        os.environ["JK_NORM_TIER"] = tier
    try:
        ms, _, out = TIMER.time(f, args, out_bytes=args[0].size * args[0].dtype.itemsize)
        return ms * 1e3, out
    finally:
        os.environ.pop("JK_NORM_TIER", None)


print(f"device: {jax.devices()[0].device_kind}; {ROUNDS} rounds, rotated; us (CUPTI median of 10)", flush=True)
for (op, dt, N), variants in CASES.items():
    x = jax.device_put(jnp.asarray(rng.standard_normal((ROWS, N)).astype(np.float32) + 0.5, dt))
    s = jnp.asarray(rng.standard_normal(N) * 0.5 + 1.0, dt)
    b = jnp.asarray(rng.standard_normal(N) * 0.5, dt)
    args = (x, s, b) if op == "layer_norm" else (x, s)
    ours = jax.jit(getattr(jk, op))
    theirs = jax.jit(getattr(ref, op))
    want = np.asarray(theirs(*(a.astype(jnp.float32) for a in args)), np.float64)
    names = variants + ["jnp"]
    t = {n: [] for n in names}
    err = {}
    for rnd in range(ROUNDS):
        for name in names[rnd % len(names):] + names[:rnd % len(names)]:
            us, out = timed("default", theirs, args) if name == "jnp" else timed(name, ours, args)
            t[name].append(us)
            if rnd == 0:
                err[name] = float(np.max(np.abs(np.asarray(out, np.float64) - want)))
    med = {n: float(np.median(t[n])) for n in names}
    print(f"{op:10s} {dt:8s} {N:4d} | " + " | ".join(f"{n} {med[n]:.2f} ({med['jnp'] / med[n]:.2f}x, err {err[n]:.1e})"
                                                    for n in names) +
          " | rounds " + " / ".join(" ".join(f"{v:.2f}" for v in t[n]) for n in names), flush=True)
