"""For Nsight Compute (bench/lab/s14_lab.sh): the 16-bit cluster tier at 24576 x 65536, each case called twice
(the first compiles), inputs made before the calls so the only kernels profiled are the op's. The case list is
the command line: OP:DTYPE[:STATS], STATS a JK_SOFTMAX_STATS value (re-read at every launch; XLA command
buffers off so each call launches anew).

  ncu ... python bench/lab/s14_ncu.py softmax:bfloat16 softmax:bfloat16:keepfma log_softmax:bfloat16 ...
"""
import os
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer=").strip()

import jax
import jax.numpy as jnp

import jax_kernels as jk

fns = {"softmax": jax.jit(jk.softmax), "log_softmax": jax.jit(jk.log_softmax)}
xs = {}
for spec in sys.argv[1:]:
    op, dname, *stats = spec.split(":")
    if dname not in xs:
        xs[dname] = jax.random.normal(jax.random.key(0), (24576, 65536), getattr(jnp, dname))
    os.environ.pop("JK_SOFTMAX_STATS", None)
    if stats:
        os.environ["JK_SOFTMAX_STATS"] = stats[0]
    for _ in range(2):
        jax.block_until_ready(fns[op](xs[dname]))
    print(f"ran {spec}", flush=True)
