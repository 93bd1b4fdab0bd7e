"""First thing on the GPU: one call per tier, printing the result or the exception (not a test)."""
import faulthandler
import traceback

import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk

# faulthandler.enable(): gdb and the C-level trace show more
print("jax", jax.__version__, jax.devices(), "cuda build:", jk.WITH_CUDA, flush=True)
rng = np.random.default_rng(0)
for dt, prec, m, k, n, what in [(jnp.float32, "highest", 3, 5, 7, "SimtTiled"), (jnp.bfloat16, None, 4, 64, 64, "SkinnyM"),
                                (jnp.float32, "highest", 300, 64, 260, "RegisterBlocked"),
                                (jnp.bfloat16, None, 100, 64, 136, "Mma bf16 small"),
                                (jnp.float32, None, 100, 64, 136, "Mma tf32 small"),
                                (jnp.float16, None, 4100, 64, 4100, "Mma f16 large")]:
    try:
        a = jnp.asarray(rng.standard_normal((m, k)), dt)
        b = jnp.asarray(rng.standard_normal((k, n)), dt)
        out = np.asarray(jk.matmul(a, b, precision=prec), np.float64)
        ref = np.asarray(a, np.float64) @ np.asarray(b, np.float64)
        print(what, "rel err", float(np.max(np.abs(out - ref)) / np.max(np.abs(ref))), flush=True)
    except Exception:
        print(what, "FAILED:", traceback.format_exc(limit=1)[-600:], flush=True)
try:
    jax.block_until_ready(jax.ffi.ffi_call("jk_matmul", jax.ShapeDtypeStruct((3, 5), jnp.float32))(
        jnp.ones((3, 4)), jnp.ones((6, 5)), precision=np.int32(0)))
except Exception as e:
    print("handler error path ok:", str(e)[:200], flush=True)
