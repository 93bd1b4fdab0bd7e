"""Session 36: what `layer_norm(..., return_stats=True)` costs on today's tiers. Issue 3 asks for mean and rstd "from
the same kernel at no visible cost"; the last measurement (bench/results/h200/norm_sweep_h200.txt) predates most tiers
(packed short rows, clusters, row pairs, windows). Every point of the benchmark's LayerNorm sweep (49152 rows, 24576 at
65536 columns; float32, bfloat16, float16), with and without the statistics: CUPTI (the benchmark's timer, median of
its calls), 2 rounds each starting with the other form, best round; y compared bit for bit between the two forms.

  python bench/lab/s36_stats_lab.py
"""
import os

import numpy as np
import jax
import jax.numpy as jnp

import jax_kernels as jk
from jax_kernels._bench.timing import Timer, describe_device

ON_GPU = jax.default_backend() == "gpu"
TIMER = Timer(describe_device(), iterations=10, min_time_s=0.25)
COLS = (32, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536) if ON_GPU else (32, 1000)
if os.environ.get("S36_COLS"):  # e.g. S36_COLS=32,128 (session 40: the one-pack lanes' rows only)
    COLS = tuple(int(c) for c in os.environ["S36_COLS"].split(","))
key = jax.random.key(0)
print(f"device: {jax.devices()[0].device_kind}; 2 rounds, best; us", flush=True)
print(f"{'dtype':9s} {'cols':>6s} {'y only':>9s} {'+ stats':>9s} {'cost':>7s}  same y", flush=True)
worst = []
for dt in (jnp.float32, jnp.bfloat16, jnp.float16):
    for n in COLS:
        rows = (24576 if n == 65536 else 49152) if ON_GPU else 64
        kx, ks, kb = jax.random.split(jax.random.fold_in(key, n), 3)
        x = jax.random.normal(kx, (rows, n), dt)
        s = (1 + 0.1 * jax.random.normal(ks, (n,), jnp.float32)).astype(dt)
        b = (0.1 * jax.random.normal(kb, (n,), jnp.float32)).astype(dt)
        f = {False: jax.jit(lambda x, s, b: jk.layer_norm(x, s, b)),
             True: jax.jit(lambda x, s, b: jk.layer_norm(x, s, b, return_stats=True))}
        t = {False: [], True: []}
        outs = {}
        for rnd in range(2):
            for stats in ((False, True) if rnd == 0 else (True, False)):
                ms, _, out = TIMER.time(f[stats], (x, s, b), out_bytes=x.size * x.dtype.itemsize)
                t[stats].append(ms * 1e3)
                outs.setdefault(stats, out)
        same = bool(np.array_equal(np.asarray(outs[False]), np.asarray(outs[True][0])))
        a, c = min(t[False]), min(t[True])
        worst.append((c / a - 1, np.dtype(dt).name, n))
        print(f"{np.dtype(dt).name:9s} {n:6d} {a:9.2f} {c:9.2f} {100 * (c / a - 1):+6.1f}%  {same}", flush=True)
worst.sort(reverse=True)
print("largest costs:", ", ".join(f"{d} {n} {100 * w:+.1f}%" for w, d, n in worst[:5]), flush=True)
