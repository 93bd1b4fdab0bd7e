"""Where the Hopper tier's output goes wrong, if it does: per shape, the relative error and the pattern of
bad elements (rows/columns mod the fragment and tile sizes). JK_MATMUL_WGMMA=1 for every call."""
import os

os.environ["JK_MATMUL_WGMMA"] = "1"
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402

rng = np.random.default_rng(0)
print(jax.devices()[0].device_kind)
for dt in (jnp.bfloat16, jnp.float16):
    for m, k, n in [(128, 64, 128), (128, 16, 128), (256, 128, 512), (64, 64, 64), (200, 72, 136), (4096, 4096, 4096)]:
        a = jnp.asarray(rng.standard_normal((m, k)), dt)
        b = jnp.asarray(rng.standard_normal((k, n)), dt)
        try:
            out = np.asarray(jk.matmul(a, b).astype(jnp.float32), np.float64)
        except Exception as e:  # noqa: BLE001
            print(np.dtype(dt).name, (m, k, n), "FAILED", type(e).__name__, str(e)[:200])
            continue
        rows = slice(None) if m <= 512 else slice(0, 256)
        ref = np.asarray(a[rows].astype(jnp.float32), np.float64) @ np.asarray(b.astype(jnp.float32), np.float64)
        o = out[rows]
        err = np.abs(o - ref)
        bad = err > 0.02 * np.sqrt(k) + 0.02 * np.abs(ref)
        line = f"{np.dtype(dt).name} {(m, k, n)} rel err {err.max() / np.abs(ref).max():.1e} bad {bad.mean():.3f}"
        if bad.any():
            r, c = np.nonzero(bad)
            line += (f" first bad ({r[0]},{c[0]}) out {o[r[0], c[0]]:.3f} ref {ref[r[0], c[0]]:.3f};"
                     f" bad rows%16 {np.unique(r % 16)[:16]} cols%16 {np.unique(c % 16)[:16]};"
                     f" finite {np.isfinite(o).mean():.3f}; zeros {(o == 0).mean():.3f}")
        print(line, flush=True)
