"""Session 31: how far the lean 16-bit cluster rows' unshifted statistics move the outputs on rows far from zero,
against the plain (shifted) form and float64 NumPy. Rows of 65536 columns (the cluster tier, 2-CTA clusters):
  one-step: float16 rows of 1000 with one element one ulp above (|mean| / std ~5e5; the mean 1000 + 2^-17 is not a
            float32: either form subtracts a rounded mean, off by up to ~0.004 a output);
  far:      bfloat16 N(4096, 40) and float16 N(1000, 1) (|mean| / std 100-1000).
Prints, per form, the max |y - ref|, the max |mean - ref| in float32 ulps of |mean|, the max rstd relative error.
  python bench/lab/s31_unshifted_check.py
"""
import os

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402


def ref(x):
    m = x.mean(-1)
    v = ((x - m[:, None]) ** 2).mean(-1)
    r = 1 / np.sqrt(v + 1e-5)
    return (x - m[:, None]) * r[:, None], m, r


def main():
    rng = np.random.default_rng(31)
    n = 65536 if jax.default_backend() == "gpu" else 4096
    cases = {}
    xf = np.full((37, n), 1000.0, np.float32)
    xf[np.arange(37), rng.integers(0, n, 37)] = 1000.5
    cases["f16 one-step"] = jnp.asarray(xf, jnp.float16)
    cases["bf16 N(4096, 40)"] = jnp.asarray(rng.normal(4096, 40, (37, n)).astype(np.float32), jnp.bfloat16)
    cases["f16 N(1000, 1)"] = jnp.asarray(rng.normal(1000, 1, (37, n)).astype(np.float32), jnp.float16)
    f = jax.jit(lambda x: jk.layer_norm(x, return_stats=True))
    for name, x in cases.items():
        x64 = np.asarray(x.astype(jnp.float32), np.float64)
        ey, em, er = ref(x64)
        line = [f"{name:18s}"]
        for lean in ("0", "1"):
            os.environ["JK_NORM_LEAN"] = lean
            y, m, r = jax.block_until_ready(f(x))
            y = np.asarray(y.astype(jnp.float32), np.float64)
            ulp = np.spacing(np.abs(em).astype(np.float32)).astype(np.float64)
            line.append(f"{'lean' if lean == '1' else 'plain'}: y {np.max(np.abs(y - ey)):.2e}, mean "
                        f"{np.max(np.abs(np.asarray(m, np.float64) - em) / ulp):.2f} ulp, rstd "
                        f"{np.max(np.abs(np.asarray(r, np.float64) - er) / er):.1e}")
        print(" | ".join(line), flush=True)
    os.environ.pop("JK_NORM_LEAN", None)


if __name__ == "__main__":
    main()
