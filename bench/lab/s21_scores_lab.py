"""Session 21: the GPT-2 attention scores matmul (8,12,1024,64) @ (8,12,64,1024) bf16 ran 477 us against jnp's 63
(call 10). Time it under the tier knobs (default: the mma.sync tier, K = 64 being under the wgmma tier's K >= 256;
JK_MATMUL_WGMMA=1 forces wgmma), unbatched and with the batch folded, against jnp; then (ONCE=1) run it once for
Nsight Compute. CUPTI, median of 20 calls, one process (bench/lab/matmul_wgmma_lab.py's median_ms).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels import reference as ref  # noqa: E402

bf = jnp.bfloat16
k1, k2 = jax.random.split(jax.random.key(0))
q = jax.random.normal(k1, (8, 12, 1024, 64), jnp.float32).astype(bf)
kt = jax.random.normal(k2, (8, 12, 64, 1024), jnp.float32).astype(bf)
if os.environ.get("ONCE"):
    f = jax.jit(jk.matmul)
    for _ in range(3):
        jax.block_until_ready(f(q, kt))
    sys.exit(0)
from matmul_wgmma_lab import median_ms  # noqa: E402

want = np.asarray(ref.matmul(q[:1, :2].astype(jnp.float32), kt[:1, :2].astype(jnp.float32)))
cases = [("batched 96 x 1024x1024x64", (q, kt)), ("one 1024x1024x64", (q[0, 0], kt[0, 0])),
         ("batched 96 x 1024x1024x128", (jnp.concatenate([q, q], -1), jnp.concatenate([kt, kt], -2))),
         ("batched 96 x 1024x1024x256", (jnp.concatenate([q] * 4, -1), jnp.concatenate([kt] * 4, -2)))]
for name, args in cases:
    row = [name]
    for var, env in (("default", {}), ("wgmma", {"JK_MATMUL_WGMMA": "1"}), ("mma64", {"JK_MATMUL_WGMMA": "0"})):
        os.environ.update(env)
        try:
            f = jax.jit(jk.matmul)
            t = median_ms(f, args, 20) * 1e3
            if name.startswith("batched 96 x 1024x1024x64"):
                got = np.asarray(f(*args)[:1, :2].astype(jnp.float32))
                row.append(f"{var} {t:.1f} (err {np.max(np.abs(got - want)) / np.max(np.abs(want)):.1e})")
            else:
                row.append(f"{var} {t:.1f}")
        finally:
            for v in env:
                os.environ.pop(v, None)
    row.append(f"jnp {median_ms(jax.jit(ref.matmul), args, 20) * 1e3:.1f}")
    print(" | ".join(row), flush=True)
