"""Session 34: programmatic dependent launch where kernels do run back to back: XLA command buffers (CUDA graphs) on.
Run once with XLA's default flags and once with S34_FORCE=1 (command buffers for FUSION and CUSTOM_CALL from one
command). Jitted chains of 16 layer norms (ours after ours; an XLA fusion then ours), JK_PDL=1 / 0 alternated over 3
rounds; host wall clock per call (median of 300 calls after warm-up, block_until_ready each) and the CUPTI sum.

  [S34_FORCE=1] python bench/lab/s34_pdl_graph.py
(A record: the PDL build ran in calls 1-3 and was reverted in e87ef48; JK_PDL does nothing since.)
"""
import os
import statistics
import sys

if os.environ.get("S34_FORCE") == "1":
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer=FUSION,CUSTOM_CALL"
                               " --xla_gpu_graph_min_graph_size=1")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels._bench.timing import Timer, describe_device  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab_host  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
R = 49152 if ON_GPU else 7
rng = np.random.default_rng(0)
TIMER = Timer(describe_device(), iterations=10, min_time_s=0.25)


def host_us(f, args, calls=300):
    return lab_host.host_us(f, args, calls, warm=30, on_gpu=ON_GPU, cpu_calls=3)


def chain_ours(x, s, b):
    for _ in range(16):
        x = jk.layer_norm(x, s, b)
    return x


def chain_mixed(x, s, b):
    for _ in range(16):
        x = jk.layer_norm(x * 1.5 + 0.25, s, b)
    return x


print(f"device: {jax.devices()[0].device_kind}; XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}", flush=True)
for dt, n in (("bfloat16", 32), ("float32", 32), ("bfloat16", 128), ("bfloat16", 1024)):
    x = jnp.asarray(rng.standard_normal((R, n)).astype(np.float32), dt)
    s = jnp.asarray(rng.standard_normal(n).astype(np.float32), dt)
    b = jnp.asarray(rng.standard_normal(n).astype(np.float32), dt)
    for name, fn in (("ours x16", chain_ours), ("fusion + ours x16", chain_mixed)):
        f = jax.jit(fn)
        res = {"1": [], "0": []}
        for rnd in range(3):
            for pdl in (("1", "0") if rnd % 2 == 0 else ("0", "1")):
                os.environ["JK_PDL"] = pdl
                h = host_us(f, (x, s, b))
                ms, _, _ = TIMER.time(f, (x, s, b), out_bytes=x.size * x.dtype.itemsize)
                res[pdl].append((h, ms * 1e3))
        os.environ.pop("JK_PDL", None)
        print(f"layer_norm {dt} {R}x{n} {name:18s} | " + " | ".join(
            f"pdl={k}: host {statistics.median(h for h, _ in v):8.2f} (" + " ".join(f"{h:.1f}" for h, _ in v) +
            f") cupti {statistics.median(c for _, c in v):8.2f}" for k, v in res.items()), flush=True)
