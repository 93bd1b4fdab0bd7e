"""Session 29: the norms at 64 columns (and, S29_SET=more, other short rows off the sweep) (49152 rows; not a sweep point of issue 3, but under jnp in session 29's call 5:
LayerNorm bf16 0.92x, f16 0.94x, float32 0.87x, RMSNorm float32 0.93x). Every packed short-row configuration
("packed C R": C packs a lane, R rows a lane group) against the default and jnp, 3 rounds in one process, each round
starting one variant later; the benchmark's timer (CUPTI median of 10 calls), parameters as jit arguments. Also the
largest error of each variant against float64 on the first round's inputs.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= S29_SET=64|more python bench/lab/s29_norm64_lab.py
"""
import os

os.environ["JK_NORM_TIER_DYNAMIC"] = "1"  # JK_NORM_TIER re-read at every launch
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels import reference as ref  # noqa: E402
from jax_kernels._bench.timing import Timer, describe_device  # noqa: E402

rng = np.random.default_rng(0)
TIMER = Timer(describe_device(), iterations=10, min_time_s=0.25)
ROUNDS = 3
# (op, dtype, columns): variants (JK_NORM_TIER values; "default": unset). S29_SET=64 (call 6, the defaults then) or
# more (call 7: the new 64-column defaults checked, and R = 2 at the other short rows off the sweep).
SETS = {
    "64": {
        ("layer_norm", "bfloat16", 64): ["default", "packed 2 1", "packed 2 2", "packed 1 2", "packed 1 4",
                                         "packed 4 2", "packed 8 1"],
        ("layer_norm", "float16", 64): ["default", "packed 2 1", "packed 2 2", "packed 1 2", "packed 1 4",
                                        "packed 4 2"],
        ("layer_norm", "float32", 64): ["default", "packed 1 2", "packed 2 2", "packed 4 1", "packed 4 2",
                                        "packed 1 4"],
        ("rms_norm", "float32", 64): ["default", "packed 2 1", "packed 2 2", "packed 1 2", "packed 4 1"],
    },
    "more": {
        ("layer_norm", "bfloat16", 64): ["default", "packed 4 1", "packed 1 4"],
        ("layer_norm", "float32", 64): ["default", "packed 2 1", "packed 1 4"],
        ("rms_norm", "float32", 64): ["default", "packed 2 1", "packed 1 2", "packed 1 4"],
        ("rms_norm", "bfloat16", 64): ["default", "packed 2 2", "packed 1 2", "packed 1 4"],
        ("rms_norm", "float16", 64): ["default", "packed 2 2", "packed 1 2"],
        ("layer_norm", "bfloat16", 256): ["default", "packed 2 2", "packed 4 2", "packed 4 1"],
        ("rms_norm", "bfloat16", 256): ["default", "packed 2 2", "packed 4 2"],
        ("layer_norm", "float32", 16): ["default", "packed 2 2", "packed 1 2", "packed 1 4"],
        ("rms_norm", "float32", 16): ["default", "packed 2 2", "packed 1 2"],
    },
}
CASES = SETS[os.environ.get("S29_SET", "64")]


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


print(f"device: {jax.devices()[0].device_kind}; {ROUNDS} rounds, rotated; us (CUPTI median of 10)")
for (op, dt, N), variants in CASES.items():
    x = jax.device_put(jnp.asarray(rng.standard_normal((49152, N)).astype(np.float32) + 0.5, dt))
    s = jnp.asarray(rng.standard_normal(N) * 0.5 + 1.0, dt)
    b = jnp.asarray(rng.standard_normal(N) * 0.5, dt)
    args = (x, s, b) if op == "layer_norm" else (x, s)
    ours = jax.jit(getattr(jk, op))
    theirs = jax.jit(getattr(ref, op))
    want = np.asarray(theirs(*(a.astype(jnp.float32) for a in args)), np.float64)  # float32 reference of the inputs
    names = variants + ["jnp"]
    t = {n: [] for n in names}
    err = {}
    for rnd in range(ROUNDS):
        for name in names[rnd % len(names):] + names[:rnd % len(names)]:
            us, out = timed("default", theirs, args) if name == "jnp" else timed(name, ours, args)
            t[name].append(us)
            if rnd == 0:
                err[name] = float(np.max(np.abs(np.asarray(out, np.float64) - want)))
    print(f"\n| op | dtype, cols | " + " | ".join(names) + " |")
    print("|---|---|" + "---:|" * len(names))
    for rnd in range(ROUNDS):
        print(f"| {op} | {dt} {N} r{rnd} | " + " | ".join(f"{t[n][rnd]:.2f}" for n in names) + " |")
    print(f"| {op} | {dt} {N} median | " + " | ".join(f"**{np.median(t[n]):.2f}**" for n in names) + " |")
    print(f"| {op} | {dt} {N} max err | " + " | ".join(f"{err[n]:.1e}" for n in names) + " |", flush=True)
