"""Session 34: programmatic dependent launch (PDL) on the packed short norm rows and every transpose kernel.

Part 1, the benchmark's conditions: our kernel with JK_PDL=1 and JK_PDL=0 (re-read at every launch) against jnp, the
benchmark's timer (CUPTI median of 10 back-to-back calls, parameters as jit arguments), XLA command buffers off, 3
rounds in one process, each starting one variant later; medians. Outputs of both settings compared with each other
(exact) and with jnp.

Part 2, end to end (is the gain real, or only in how CUPTI splits time between kernels?): jitted chains of 16 ops
(ours after ours, and ours after an XLA fusion), host wall clock per call (median of 200 calls after warm-up,
block_until_ready each) and the CUPTI sum, PDL on and off.

  python bench/lab/s34_pdl_lab.py
(A record: the PDL build ran in calls 1-3 and was reverted in e87ef48; JK_PDL does nothing since.)
"""
import os
import statistics
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels import reference as ref  # noqa: E402
from jax_kernels._bench.timing import Timer, describe_device  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab_host  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
rng = np.random.default_rng(0)
TIMER = Timer(describe_device(), iterations=10, min_time_s=0.25)
ROUNDS = 3 if ON_GPU else 1
R = 49152 if ON_GPU else 7


def arr(shape, dt):
    if dt == "int8":
        return jnp.asarray(rng.integers(-128, 128, shape, dtype=np.int8))
    return jnp.asarray(rng.standard_normal(shape).astype(np.float32) + 0.5, dt)


def norm_case(op, dt, n):
    x, s, b = arr((R, n), dt), arr((n,), dt), arr((n,), dt)
    args = (x, s, b) if op == "layer_norm" else (x, s)
    return f"{op} {dt} {R}x{n}", jax.jit(getattr(jk, op)), jax.jit(getattr(ref, op)), args


def transpose_case(shape, dt, perm):
    if not ON_GPU:
        shape = tuple(min(d, 9) for d in shape)
    x = arr(shape, dt)
    return (f"transpose {dt} {'x'.join(map(str, shape))} {perm}", jax.jit(lambda x: jk.transpose(x, perm)),
            jax.jit(lambda x: jnp.transpose(x, perm)), (x,))


CASES = []
for op in ("layer_norm", "rms_norm"):
    for dt in ("float32", "bfloat16", "float16"):
        CASES.append(norm_case(op, dt, 32))
for op, dt in (("layer_norm", "bfloat16"), ("layer_norm", "float16"), ("rms_norm", "bfloat16")):
    CASES.append(norm_case(op, dt, 128))
CASES.append(norm_case("layer_norm", "bfloat16", 1024))  # a control: not converted (block tier)
for dt in ("float32", "bfloat16", "int8"):
    CASES.append(transpose_case((2048, 512), dt, (1, 0)))
CASES.append(transpose_case((8192, 8192), "int8", (1, 0)))
CASES.append(transpose_case((8192, 8192), "bfloat16", (1, 0)))
CASES.append(transpose_case((32, 128, 64, 64), "bfloat16", (0, 2, 1, 3)))
CASES.append(transpose_case((4097, 1023), "float32", (1, 0)))
CASES.append(transpose_case((8, 16, 32, 64, 2), "float32", (4, 0, 3, 1, 2)))
CASES.append(transpose_case((64, 1024, 1024), "float32", (0, 2, 1)))


def timed(pdl, f, args):
    if pdl is None:
        os.environ.pop("JK_PDL", None)
    else:
        os.environ["JK_PDL"] = pdl
    try:
        out_bytes = sum(a.size * a.dtype.itemsize for a in args[:1])
        ms, _, out = TIMER.time(f, args, out_bytes=out_bytes)
        return ms * 1e3, out
    finally:
        os.environ.pop("JK_PDL", None)


print(f"device: {jax.devices()[0].device_kind}; part 1: {ROUNDS} rounds, rotated; us (CUPTI median of 10)", flush=True)
names = ["pdl", "nopdl", "jnp"]
for label, ours, theirs, args in CASES:
    t = {n: [] for n in names}
    outs = {}
    for rnd in range(ROUNDS):
        for name in names[rnd % 3:] + names[:rnd % 3]:
            if name == "jnp":
                us, out = timed(None, theirs, args)
            else:
                us, out = timed("1" if name == "pdl" else "0", ours, args)
            t[name].append(us)
            outs.setdefault(name, np.asarray(out.astype(jnp.float32) if out.dtype != jnp.int8 else out))
    same = bool(np.array_equal(outs["pdl"], outs["nopdl"], equal_nan=True))
    err = float(np.max(np.abs(outs["pdl"].astype(np.float64) - outs["jnp"].astype(np.float64))))
    med = {n: statistics.median(t[n]) for n in names}
    print(f"{label:44s} | pdl {med['pdl']:8.2f} ({med['jnp'] / med['pdl']:.3f}x) | nopdl {med['nopdl']:8.2f} "
          f"({med['jnp'] / med['nopdl']:.3f}x) | jnp {med['jnp']:8.2f} | pdl==nopdl {same} | err vs jnp {err:.1e} | "
          "rounds " + " / ".join(" ".join(f"{v:.2f}" for v in t[n]) for n in names), flush=True)


# ---- part 2: chains, host clock and CUPTI ----
def host_us(f, args, calls=200):
    return lab_host.host_us(f, args, calls, warm=21, on_gpu=ON_GPU, cpu_calls=3)


def chain_ours(x, s, b):  # 16 of our kernels back to back
    for _ in range(16):
        x = jk.layer_norm(x, s, b)
    return x


def chain_mixed(x, s, b):  # an XLA fusion, then ours, 16 times
    for _ in range(16):
        x = jk.layer_norm(x * 1.5 + 0.25, s, b)
    return x


def chain_ref(x, s, b):
    for _ in range(16):
        x = ref.layer_norm(x, s, b)
    return x


def chain_transpose(x):  # 16 transposes of 2048 x 512 float32
    for _ in range(8):
        x = jk.transpose(jk.transpose(x, (1, 0)), (1, 0))
    return x


print("part 2: chains of 16; host us per call (median of 200) | CUPTI us per call (sum of kernels)", flush=True)
for dt, n in (("bfloat16", 32), ("float32", 32), ("bfloat16", 128)):
    x, s, b = arr((R, n), dt), arr((n,), dt), arr((n,), dt)
    for name, fn in (("ours x16", chain_ours), ("XLA fusion + ours x16", chain_mixed), ("jnp x16", chain_ref)):
        f = jax.jit(fn)
        row = []
        for pdl in ("1", "0"):
            os.environ["JK_PDL"] = pdl
            h = host_us(f, (x, s, b))
            c, _ = timed(pdl, f, (x, s, b))
            row.append(f"pdl={pdl}: host {h:8.2f} cupti {c:8.2f}")
        os.environ.pop("JK_PDL", None)
        print(f"layer_norm {dt} {R}x{n} {name:24s} | " + " | ".join(row), flush=True)
x = arr((2048, 512) if ON_GPU else (8, 4), "float32")
for name, fn in (("ours x16", chain_transpose),):
    f = jax.jit(fn)
    row = []
    for pdl in ("1", "0"):
        os.environ["JK_PDL"] = pdl
        h = host_us(f, (x,))
        c, _ = timed(pdl, f, (x,))
        row.append(f"pdl={pdl}: host {h:8.2f} cupti {c:8.2f}")
    os.environ.pop("JK_PDL", None)
    print(f"transpose float32 2048x512 {name:14s} | " + " | ".join(row), flush=True)
