"""Session 34: the packed short norm rows reading x and the parameters through the read-only path (JK_NORM_NC=1:
LDG.E.128.CONSTANT, where the default is a plain LDG.E.128) against the default and jnp, at the sweep's L2-resident
rows (49152 x 32 / 64 / 128). The benchmark's timer (CUPTI median of 10 calls), parameters as jit arguments, XLA
command buffers off, 3 rounds in one process each starting one variant later; medians.

  python bench/lab/s34_nc_lab.py
(A record: the knob ran in call 2 and was removed in e87ef48; JK_NORM_NC does nothing since.)
"""
import os
import statistics

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels import reference as ref  # noqa: E402
from jax_kernels._bench.timing import Timer, describe_device  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
R = 49152 if ON_GPU else 7
rng = np.random.default_rng(0)
TIMER = Timer(describe_device(), iterations=10, min_time_s=0.25)
ROUNDS = 3 if ON_GPU else 1
names = ["default", "nc", "jnp"]
print(f"device: {jax.devices()[0].device_kind}; {ROUNDS} rounds, rotated; us (CUPTI median of 10)", flush=True)
for n in (32, 64, 128):
    for op in ("layer_norm", "rms_norm"):
        for dt in ("float32", "bfloat16", "float16"):
            x = jnp.asarray(rng.standard_normal((R, n)).astype(np.float32) + 0.5, dt)
            s = jnp.asarray(rng.standard_normal(n) * 0.5 + 1.0, dt)
            b = jnp.asarray(rng.standard_normal(n) * 0.5, dt)
            args = (x, s, b) if op == "layer_norm" else (x, s)
            fs = {"default": jax.jit(getattr(jk, op)), "nc": jax.jit(getattr(jk, op)), "jnp": jax.jit(getattr(ref, op))}
            t = {k: [] for k in names}
            outs = {}
            for rnd in range(ROUNDS):
                for name in names[rnd % 3:] + names[:rnd % 3]:
                    if name == "nc":
                        os.environ["JK_NORM_NC"] = "1"
                    try:
                        ms, _, out = TIMER.time(fs[name], args, out_bytes=x.size * x.dtype.itemsize)
                    finally:
                        os.environ.pop("JK_NORM_NC", None)
                    t[name].append(ms * 1e3)
                    outs.setdefault(name, np.asarray(out.astype(jnp.float32)))
            med = {k: statistics.median(v) for k, v in t.items()}
            same = bool(np.array_equal(outs["default"], outs["nc"]))
            print(f"{op:10s} {dt:8s} {n:4d} | default {med['default']:.2f} ({med['jnp'] / med['default']:.3f}x) | nc "
                  f"{med['nc']:.2f} ({med['jnp'] / med['nc']:.3f}x) | jnp {med['jnp']:.2f} | same {same} | rounds " +
                  " / ".join(" ".join(f"{v:.2f}" for v in t[k]) for k in names), flush=True)
