"""Session 25 (H200): float32 long norm rows on ClusterRowsNorm with 4 packs a thread (3 CTAs of 512 per SM, clusters
twice as wide) and, for LayerNorm, the bias in shared memory beside the scale (norm_cluster.cu, JK_NORM_CLUSTER_PACKS /
JK_NORM_SMEM_BIAS). The benchmark's long float32 cases, each variant against jnp and against x * c over the same bytes
(CUPTI, the benchmark's timer: median of 5 calls; the knobs are read at every launch, so one process times them all).

  git apply bench/lab/s25_cluster_narrow.patch   # the knobs (reverted from main: the variant lost, s25_h200.md)
  python bench/lab/s25_norm_cluster.py
"""
import os

import jax
import jax.numpy as jnp
import numpy as np

import jax_kernels as jk
from jax_kernels import reference as ref
from jax_kernels._bench.timing import Timer, describe_device

rng = np.random.default_rng(0)
TIMER = Timer(describe_device(), iterations=5)
KNOBS = ("JK_NORM_CLUSTER_PACKS", "JK_NORM_SMEM_BIAS", "JK_NORM_CLUSTER", "JK_NORM_SMEM_SCALE")


def med_us(f, *args):
    ms, _, out = TIMER.time(f, args, out_bytes=args[0].size * args[0].dtype.itemsize)
    del out
    return ms * 1e3


VARIANTS = {
    "layer_norm": [("default", {}), ("packs 4", {"JK_NORM_CLUSTER_PACKS": "4"}),
                   ("packs 4 + smem bias", {"JK_NORM_CLUSTER_PACKS": "4", "JK_NORM_SMEM_BIAS": "1"})],
    "rms_norm": [("default", {}),
                 ("packs 4", {"JK_NORM_CLUSTER_PACKS": "4", "JK_NORM_CLUSTER": "0 -1"}),
                 ("packs 4 + smem scale", {"JK_NORM_CLUSTER_PACKS": "4", "JK_NORM_CLUSTER": "0 -1",
                                           "JK_NORM_SMEM_SCALE": "1"})],
}
CASES = [(49152, 32768), (24576, 65536), (49152, 16400)]
print(f"device: {jax.devices()[0].device_kind}")
print("| op | shape | variant | us | jnp us | x jnp | % of x*c | max err |")
print("|---|---|---|---:|---:|---:|---:|---:|")
for rows, n in CASES:
    x = jax.device_put(rng.standard_normal((rows, n), np.float32) + 3.0)
    s = jax.device_put(rng.standard_normal((n,), np.float32))
    b = jax.device_put(rng.standard_normal((n,), np.float32))
    nbytes = 2 * x.size * 4
    t_ceil = med_us(jax.jit(lambda v: v * jnp.float32(1.5)), x)
    for op in ("layer_norm", "rms_norm"):
        if op == "layer_norm":
            f, g = jax.jit(lambda v: jk.layer_norm(v, s, b)), jax.jit(lambda v: ref.layer_norm(v, s, b))
        else:
            f, g = jax.jit(lambda v: jk.rms_norm(v, s)), jax.jit(lambda v: ref.rms_norm(v, s))
        t_jnp = med_us(g, x)
        want = np.asarray(g(x[:64]))
        for name, env in VARIANTS[op]:
            for k in KNOBS:
                os.environ.pop(k, None)
            os.environ.update(env)
            got = np.asarray(f(x[:64]))
            err = float(np.max(np.abs(got - want)))
            t = med_us(f, x)
            print(f"| {op} | {rows}x{n} | {name} | {t:.1f} | {t_jnp:.1f} | {t_jnp / t:.3f} | {100 * t_ceil / t:.1f}% "
                  f"| {err:.1e} |", flush=True)
        for k in KNOBS:
            os.environ.pop(k, None)
    del x
