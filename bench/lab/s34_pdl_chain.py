"""Session 34: programmatic dependent launch on GPU-bound chains (kernels of 9-60 us, so the host keeps ahead and
the kernels run back to back): 16 transposes of 4097 x 1023 float32 and of 2048 x 2048 x 16 bfloat16 (1, 0, 2), 16
layer norms of 196608 x 128 bfloat16 and of 786432 x 32 bfloat16; JK_PDL=1 / 0 alternated over 3 rounds; host wall
clock per call (median of 100 calls after warm-up, block_until_ready each) and the CUPTI sum. XLA command buffers off.

  python bench/lab/s34_pdl_chain.py
(A record: the PDL build ran in calls 1-3 and was reverted in e87ef48; JK_PDL does nothing since.)
"""
import os
import statistics
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels._bench.timing import Timer, describe_device  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab_host  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
rng = np.random.default_rng(0)
TIMER = Timer(describe_device(), iterations=10, min_time_s=0.25)


def host_us(f, args, calls=100):
    return lab_host.host_us(f, args, calls, warm=10, on_gpu=ON_GPU, cpu_calls=3)


def tchain(perm):
    def f(x):
        for _ in range(16):
            x = jk.transpose(x, perm)
        return x
    return f


def nchain(x, s, b):
    for _ in range(16):
        x = jk.layer_norm(x, s, b)
    return x


d = 1 if ON_GPU else 64
cases = [("transpose f32 4097x1023 x16", jax.jit(tchain((1, 0))),
          (jnp.asarray(rng.standard_normal((4097 // d, 1023 // d)), jnp.float32),)),
         ("transpose bf16 2048x2048x16 (1,0,2) x16", jax.jit(tchain((1, 0, 2))),
          (jnp.asarray(rng.standard_normal((2048 // d, 2048 // d, 16)), jnp.bfloat16),))]
for rows, n in ((196608, 128), (786432, 32)):
    rows //= d * d
    cases.append((f"layer_norm bf16 {rows}x{n} x16", jax.jit(nchain),
                  (jnp.asarray(rng.standard_normal((rows, n)), jnp.bfloat16), jnp.ones((n,), jnp.bfloat16),
                   jnp.zeros((n,), jnp.bfloat16))))
print(f"device: {jax.devices()[0].device_kind}", flush=True)
for name, f, args in cases:
    res = {"1": [], "0": []}
    for rnd in range(3):
        for pdl in (("1", "0") if rnd % 2 == 0 else ("0", "1")):
            os.environ["JK_PDL"] = pdl
            h = host_us(f, args)
            ms, _, _ = TIMER.time(f, args, out_bytes=args[0].size * args[0].dtype.itemsize)
            res[pdl].append((h, ms * 1e3))
    os.environ.pop("JK_PDL", None)
    print(f"{name:40s} | " + " | ".join(
        f"pdl={k}: host {statistics.median(h for h, _ in v):8.2f} (" + " ".join(f"{h:.1f}" for h, _ in v) +
        f") cupti {statistics.median(c for _, c in v):8.2f}" for k, v in res.items()), flush=True)
