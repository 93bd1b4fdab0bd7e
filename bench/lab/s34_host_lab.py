"""Session 34: host time per op, ours against XLA's own kernels. Chains of 1 and 16 ops on tiny inputs (8 x 128, so
the GPU time is ~2 us an op and the host sets the pace), jitted; wall clock per call (median of 300 after warm-up,
block_until_ready each); per op = (chain of 16 - chain of 1) / 15. XLA's ops are kept apart by
lax.optimization_barrier, so each is its own kernel. Run with XLA's default flags (command buffers as jax ships them)
and with S34_NOCB=1 (command buffers off).

  [S34_NOCB=1] python bench/lab/s34_host_lab.py
"""
import os
import sys

if os.environ.get("S34_NOCB") == "1":
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402
from jax_kernels import reference as ref  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lab_host  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
rng = np.random.default_rng(0)
x = jnp.asarray(rng.standard_normal((8, 128)), jnp.float32)
s = jnp.ones((128,), jnp.float32)
b = jnp.zeros((128,), jnp.float32)


def host_us(f, args, calls=300):
    return lab_host.host_us(f, args, calls, warm=30, on_gpu=ON_GPU, cpu_calls=20)


def chain(op, k):
    def f(x, s, b):
        for _ in range(k):
            x = jax.lax.optimization_barrier(op(x, s, b))
        return x
    return jax.jit(f)


OPS = {
    "layer_norm ours": lambda x, s, b: jk.layer_norm(x, s, b),
    "layer_norm jnp": lambda x, s, b: ref.layer_norm(x, s, b),
    "softmax ours": lambda x, s, b: jk.softmax(x),
    "softmax jnp": lambda x, s, b: jax.nn.softmax(x),
    "transpose ours (8x128 -> 128x8 -> back)": lambda x, s, b: jk.transpose(jk.transpose(x, (1, 0)), (1, 0)),
    "transpose jnp": lambda x, s, b: jnp.transpose(jax.lax.optimization_barrier(jnp.transpose(x, (1, 0)) * 2.0),
                                                   (1, 0)) * 0.5,
    "x * c (XLA)": lambda x, s, b: x * 1.0001,
}
print(f"device: {jax.devices()[0].device_kind}; XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}; us", flush=True)
for name, op in OPS.items():
    t1 = [host_us(chain(op, 1), (x, s, b)) for _ in range(2)]
    t16 = [host_us(chain(op, 16), (x, s, b)) for _ in range(2)]
    per = (min(t16) - min(t1)) / 15
    print(f"{name:42s} chain 1: {min(t1):7.1f}  chain 16: {min(t16):7.1f}  per op: {per:6.2f}", flush=True)
