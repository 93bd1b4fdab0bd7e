"""Session 27 (H200): 16-bit LayerNorm at 128 columns, the packed short-row tier with 2 packs a lane (the default since
session 26, whose lab had it 5-9% ahead) against 4 (JK_NORM_TIER="packed 4", read per launch with
JK_NORM_TIER_DYNAMIC=1): session 27's benchmark measured the 2-pack kernel at 6.34-6.38 us, session 26's the 4-pack
kernel at 5.86-6.10. 49152 x 128, parameters as jit arguments, jnp in the same process; the benchmark's timer and
iterations (10), the variants in rotating order, 4 rounds.

  python bench/lab/s27_norm128_lab.py
"""
import os

os.environ["JK_NORM_TIER_DYNAMIC"] = "1"
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels import reference as ref  # noqa: E402
from jax_kernels._bench.timing import Timer, describe_device  # noqa: E402

rng = np.random.default_rng(0)
TIMER = Timer(describe_device(), iterations=10)


def med_us(f, *args):
    ms, _, out = TIMER.time(f, args, out_bytes=args[0].size * args[0].dtype.itemsize)
    del out
    return ms * 1e3


print(f"device: {jax.devices()[0].device_kind}")
print("| op | dtype | cols | round | 2 packs us | 4 packs us | jnp us |")
print("|---|---|---:|---:|---:|---:|---:|")
for cols in (128, 64):
    for dt in (jnp.bfloat16, jnp.float16):
        x = jax.device_put(jnp.asarray(rng.standard_normal((49152, cols), np.float32), dt))
        s = jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt))
        b = jax.device_put(jnp.asarray(rng.standard_normal((cols,), np.float32), dt))
        f, g = jax.jit(jk.layer_norm), jax.jit(ref.layer_norm)
        want = np.asarray(g(x, s, b), np.float32)
        runs = {"2": {"JK_NORM_TIER": "packed 2"}, "4": {"JK_NORM_TIER": "packed 4"}, "jnp": None}
        order = list(runs)
        for rnd in range(4):
            t = {}
            for name in order[rnd % 3:] + order[:rnd % 3]:
                env = runs[name]
                if env is None:
                    t[name] = med_us(g, x, s, b)
                    continue
                os.environ.update(env)
                try:
                    t[name] = med_us(f, x, s, b)
                    err = float(np.max(np.abs(np.asarray(f(x, s, b), np.float32) - want)))
                    assert err < 0.1, err
                finally:
                    os.environ.pop("JK_NORM_TIER", None)
            print(f"| layer_norm | {jnp.dtype(dt).name} | {cols} | {rnd} | {t['2']:.2f} | {t['4']:.2f} | {t['jnp']:.2f} |",
                  flush=True)
