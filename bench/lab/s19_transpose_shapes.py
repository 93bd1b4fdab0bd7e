"""Session 19: jax_kernels.transpose against jnp.transpose at layout changes off issue 5's case list (CUPTI, the
benchmark's method: median of 20 calls of each jitted function, ours and jnp alternated twice, the better median of
each kept; bit-exact check against jnp).

  python bench/lab/s19_transpose_shapes.py
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.mosaic.gpu.profiler import measure

import jax_kernels as jk

CASES = [  # (shape, dtype, perm)
    ((4096, 4096), jnp.float32, (1, 0)),
    ((4096, 4096), jnp.bfloat16, (1, 0)),
    ((1024, 1024), jnp.float32, (1, 0)),
    ((4096, 1000), jnp.float32, (1, 0)),
    ((16, 1024, 1024), jnp.bfloat16, (0, 2, 1)),
    ((8, 2048, 32, 128), jnp.bfloat16, (0, 2, 1, 3)),
    ((8, 32, 2048, 128), jnp.bfloat16, (0, 2, 1, 3)),
    ((64, 224, 224, 3), jnp.float32, (0, 3, 1, 2)),
    ((64, 3, 224, 224), jnp.bfloat16, (0, 2, 3, 1)),
    ((32, 56, 56, 256), jnp.bfloat16, (0, 3, 1, 2)),
    ((2, 3, 4, 5, 6, 7, 8, 9), jnp.float32, (7, 6, 5, 4, 3, 2, 1, 0)),
    ((128, 64, 8, 96), jnp.bfloat16, (2, 0, 3, 1)),
]


def median_us(f, x, n=20):
    _, ts = measure(f, iterations=n)(x)  # ms per call, kernel time (CUPTI)
    return float(np.median(np.asarray(ts))) * 1e3


def main():
    print("device:", jax.devices()[0].device_kind)
    print("| shape | dtype | perm | MB moved | ours us | jnp us | ours GB/s | ratio | exact |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|")
    ratios = []
    for shape, dt, perm in CASES:
        x = jax.random.normal(jax.random.key(0), shape, jnp.float32).astype(dt)
        ours = jax.jit(lambda a, p=perm: jk.transpose(a, p))
        ref = jax.jit(lambda a, p=perm: jnp.transpose(a, p))
        exact = bool(jnp.array_equal(ours(x), ref(x)))
        to, tr = [], []
        for _ in range(2):
            to.append(median_us(ours, x))
            tr.append(median_us(ref, x))
        o, r = min(to), min(tr)
        nbytes = 2 * x.size * x.dtype.itemsize
        ratios.append(r / o)
        print(f"| {'x'.join(map(str, shape))} | {jnp.dtype(dt).name} | {perm} | {nbytes / 1e6:.1f} | {o:.2f} | {r:.2f} "
              f"| {nbytes / o / 1e3:.0f} | {r / o:.3f}x | {exact} |", flush=True)
    print(f"geomean {float(np.exp(np.mean(np.log(ratios)))):.3f}x, min {min(ratios):.3f}x")


if __name__ == "__main__":
    main()
