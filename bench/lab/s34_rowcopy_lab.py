"""Session 34: the 16-byte row copy's CTA size and accesses per thread (JK_TRANSPOSE_TIERS tokens rcTxU, re-read at
every launch) and its divisions (precomputed multipliers by default since call 5; "rcslow" the division instructions), where call 3 found our plain row copy at 85.0% / 92.0% of the copy ceiling at 67 / 134 MB moved and
XLA's x * c (16384-32768 CTAs of 128 threads, one 16-byte access a thread) at 92.7% / 96.6%:
  - a plain copy: a (2, 2, n) float32 array with (1, 0, 2) (runs of n / 4 elements, the output-order row copy);
  - the attention permute (32, 128, 64, 64) bfloat16 (0, 2, 1, 3) (128-byte runs): the default tiled row copy, and
    the input-order row copy ("norowtile") at each shape; (8, 32, 2048, 64) float16 the same, as a check.
The benchmark's timer (CUPTI median of 10 calls, outputs kept alive), XLA command buffers off, 3 rounds in one process
each starting one variant later; best of the rounds (the transpose labs' rule); outputs compared with jnp's (exact).

  python bench/lab/s34_rowcopy_lab.py
"""
import os

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels._bench.timing import Timer, describe_device  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
TIMER = Timer(describe_device(), iterations=10, min_time_s=0.25)
ROUNDS = 3 if ON_GPU else 1
key = jax.random.key(0)
# Calls 4-5 ran rc128x1 ... rc512x4 (and rcslow, a fast-division build reverted after call 5); the build after them
# keeps two tokens: rc256x4 (the shape before, 4 accesses a thread) and rc128x2. Unknown tokens time the default.
SHAPES = ["rc256x4", "rc128x2"] if os.environ.get("S34_CALL", "6") == "6" else [
    "rc128x1", "rc128x2", "rc256x1", "rc256x2", "rc512x1", "rc512x2"]

ceiling = jax.random.normal(key, ((1 << 28) if ON_GPU else 1024,), jnp.float32)
xc = jax.jit(lambda x: x * jnp.float32(1.0001))


def banner():
    """The labs' first line (session 35 and 36 labs call it too)."""
    print(f"device: {jax.devices()[0].device_kind}; {ROUNDS} rounds, rotated; best; % of the 1 GiB x * c", flush=True)


def int8(shape):
    """Random int8 input (session 36's tile labs)."""
    return jax.random.randint(key, shape, -128, 127, jnp.int8)


def bf16(shape):
    """Random bfloat16 input (session 37's ragged-transpose labs)."""
    return jax.random.normal(key, shape, jnp.bfloat16)


def f32(shape):
    """Random float32 input (session 38's labs)."""
    return jax.random.normal(key, shape, jnp.float32)


def run(label, x, perm, variants):
    ours = jax.jit(lambda x: jk.transpose(x, perm))
    want = np.asarray(jnp.transpose(x, perm))
    names = variants + ["jnp"]
    fs = {n: ours for n in variants}
    fs["jnp"] = jax.jit(lambda x: jnp.transpose(x, perm))
    t = {n: [] for n in names}
    ok = {}
    nbytes = 2 * x.size * x.dtype.itemsize
    for rnd in range(ROUNDS):
        for name in names[rnd % len(names):] + names[:rnd % len(names)]:
            if name not in ("jnp", "default"):
                os.environ["JK_TRANSPOSE_TIERS"] = name
            try:
                ms, _, out = TIMER.time(fs[name], (x,), out_bytes=nbytes // 2)
            finally:
                os.environ.pop("JK_TRANSPOSE_TIERS", None)
            t[name].append(ms * 1e3)
            ok.setdefault(name, bool(np.array_equal(np.asarray(out), want)))
    cms, _, _ = TIMER.time(xc, (ceiling,), out_bytes=ceiling.size * 4)
    ceil_gbs = 2 * ceiling.size * 4 / (cms * 1e-3) / 1e9
    print(f"{label} ({nbytes / 1e6:.1f} MB moved; ceiling {ceil_gbs:.0f} GB/s)", flush=True)
    for n in names:
        us = min(t[n])
        print(f"  {n:22s} best {us:8.2f} us {100 * nbytes / (us * 1e-6) / 1e9 / ceil_gbs:6.1f}%  ok {ok[n]}  rounds " +
              " ".join(f"{v:.2f}" for v in t[n]), flush=True)


if __name__ == "__main__":  # session 35 imports run() from here
    banner()
    for mb in ((32 * 128 * 64 * 64 * 2, 8192 * 8192) if ON_GPU else (4096,)):
        n = mb // 4
        x = jax.random.normal(key, (2, 2, n // 4), jnp.float32)
        run(f"row copy float32 (2, 2, {n // 4}) (1, 0, 2)", x, (1, 0, 2), ["default"] + SHAPES)
    d = 1 if ON_GPU else 16
    p = jax.random.normal(key, (32, 128 // d, 64, 64), jnp.bfloat16)
    run("permute bf16 (32, 128, 64, 64) (0, 2, 1, 3)", p, (0, 2, 1, 3),
        ["default", "norowtile"] + [f"norowtile,{s}" for s in SHAPES])
    q = jax.random.normal(key, (8, 32, 2048 // d, 64), jnp.float16)
    run("permute f16 (8, 32, 2048, 64) (0, 2, 1, 3)", q, (0, 2, 1, 3),
        ["default", "norowtile"] + [f"norowtile,{s}" for s in SHAPES])
