"""One small call per CUDA tier (for compute-sanitizer): SimtTiled, SkinnyM, SimtRegisterBlocked (3 tiles),
MmaTensorCore (3 tiles x bf16/f16/TF32), with every epilogue operand present."""
import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk

rng = np.random.default_rng(0)
cases = [(jnp.float32, "highest", 33, 17, 65), (jnp.bfloat16, None, 5, 64, 72), (jnp.float32, "highest", 300, 64, 260),
         (jnp.float32, "highest", 2100, 16, 2060), (jnp.float32, "highest", 520, 64, 136)]
for dt in (jnp.bfloat16, jnp.float16, jnp.float32):
    cases += [(dt, None, 100, 72, 136), (dt, None, 1030, 40, 520), (dt, None, 4100, 32, 4100)]
worst = 0.0
for dt, prec, m, k, n in cases:
    x = jnp.asarray(rng.standard_normal((m, k)), dt)
    w = jnp.asarray(rng.standard_normal((k, n)) / np.sqrt(k), dt)
    b = jnp.asarray(rng.standard_normal((n,)), dt)
    r = jnp.asarray(rng.standard_normal((m, n)), dt)
    out = jk.linear(x, w, b, activation="silu", residual=r, precision=prec)
    y = np.asarray(x, np.float64) @ np.asarray(w, np.float64) + np.asarray(b, np.float64)
    y = y / (1 + np.exp(-y)) + np.asarray(r, np.float64)
    err = float(np.max(np.abs(np.asarray(out, np.float64) - y)) / np.max(np.abs(y)))
    worst = max(worst, err)
    print(np.dtype(dt).name, prec, (m, k, n), f"rel err {err:.1e}")
print("worst", worst)
