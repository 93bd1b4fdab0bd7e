"""Session 35: bench/lab/s35_jaxbuf_lab.cu's kernels (an x * c clone, linear copies, our production row copies and the
permute) timed with cudaEvents on buffers JAX allocated and on cudaMalloc buffers, in one process, alternating; and
XLA's own x * c under the benchmark's CUPTI timer as a reference. Needs only jax (no jax_kernels build).

  python bench/lab/s35_jaxbuf_lab.py LIB.so
"""
import ctypes
import statistics
import sys

import jax
import jax.numpy as jnp

lib = ctypes.CDLL(sys.argv[1])
lib.s35_name.restype = ctypes.c_char_p
lib.s35_bytes.restype = ctypes.c_size_t
n = lib.s35_bytes() // 4
key = jax.random.key(0)
x = jax.random.normal(key, (n,), jnp.float32)
ys = [jnp.full((n,), float(i), jnp.float32) for i in range(8)]  # 8 distinct output buffers, as the library rotates
jax.block_until_ready([x] + ys)
xp = ctypes.c_void_p(x.unsafe_buffer_pointer())
yp = (ctypes.c_void_p * 8)(*[y.unsafe_buffer_pointer() for y in ys])
print(f"device: {jax.devices()[0].device_kind}; cudaEvents us, alone (median of 21, each behind a spin kernel) / "
      "b2b (mean of 21 queued); 3 rounds, JAX's buffers and the library's own alternating", flush=True)
a, b = ctypes.c_float(), ctypes.c_float()
res = {}
for rnd in range(3):
    for i in range(lib.s35_cases()):
        for where in (("jax", "own") if rnd % 2 == 0 else ("own", "jax")):
            if where == "jax":
                lib.s35_time(i, xp, yp, ctypes.byref(a), ctypes.byref(b))
            else:
                lib.s35_time_own(i, ctypes.byref(a), ctypes.byref(b))
            res.setdefault((i, where), []).append((a.value, b.value))
for i in range(lib.s35_cases()):
    line = f"{lib.s35_name(i).decode():44s}"
    for where in ("jax", "own"):
        r = res[(i, where)]
        line += f"  {where}: alone {min(v[0] for v in r):6.2f} b2b {min(v[1] for v in r):6.2f}"
    print(line, flush=True)
try:
    from jax.experimental.mosaic.gpu.profiler import measure
    f = jax.jit(lambda t: t * jnp.float32(1.0001))
    ts = []
    for _ in range(3):
        _, t = measure(f, iterations=10)(x)
        ts.append(statistics.median(t) * 1e3)
    print(f"XLA x * c, CUPTI (the benchmark's timer), 67 MB: {min(ts):.2f} us (rounds {ts})", flush=True)
except Exception as e:  # noqa: BLE001
    print("CUPTI reference failed:", e)
