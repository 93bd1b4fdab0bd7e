"""Prepared in session 22 for the next (not run): XLA's own kernels for issue 6's f32 HIGHEST 512x512x256 (Triton
`gemm_fusion_dot_general_1`, 512 CTAs of 64 threads, bench/lab/s22_h200.md call 4) and bf16 1000^3 (cuBLAS nvjet
64x144 tiles), compiled once under XLA_FLAGS=--xla_dump_to=DIR so the dump holds the autotuned Triton config
(block_m / block_n / block_k / split_k / num_stages / num_warps in the fusion's backend_config) and the PTX to read
its inner loop. Prints the configs it finds.

  XLA_FLAGS="--xla_dump_to=$OUT/xla_dump --xla_dump_hlo_as_text" python bench/lab/s23_xla_dump.py $OUT/xla_dump
Session 23 added the decode case (bf16 8x4096x4096) and issue 5's 2048x512 transposes (float32, bf16, int8).
"""
import glob
import os
import re
import sys

import jax
import jax.numpy as jnp
import numpy as np

HI = jax.lax.Precision.HIGHEST
rng = np.random.default_rng(0)
a = jax.device_put(rng.standard_normal((512, 256), np.float32))
b = jax.device_put(rng.standard_normal((256, 512), np.float32))
jax.block_until_ready(jax.jit(lambda x, y: jnp.matmul(x, y, precision=HI))(a, b))
a16 = jax.device_put(rng.standard_normal((1000, 1000), np.float32).astype(jnp.bfloat16))
jax.block_until_ready(jax.jit(jnp.matmul)(a16, a16))
# Added in session 23: the decode case (XLA's split-K Triton gemm + reduction) and issue 5's small transposes.
x8 = jax.device_put(rng.standard_normal((8, 4096), np.float32).astype(jnp.bfloat16))
w = jax.device_put(rng.standard_normal((4096, 4096), np.float32).astype(jnp.bfloat16))
jax.block_until_ready(jax.jit(jnp.matmul)(x8, w))
for dt in (np.float32, jnp.bfloat16, np.int8):
    t = jax.device_put(rng.standard_normal((2048, 512), np.float32).astype(dt))
    jax.block_until_ready(jax.jit(jnp.transpose)(t))

dump = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("XLA_DUMP_DIR", "")
for path in sorted(glob.glob(os.path.join(dump, "*after_optimizations.txt"))):
    text = open(path).read()
    for m in re.finditer(r'"triton_gemm_config":\{[^}]*\}', text):
        print(os.path.basename(path), m.group(0))
    for m in re.finditer(r'custom_call_target="__cublas\$[^"]*"[^\n]*', text):
        print(os.path.basename(path), m.group(0)[:300])
print("ptx files:", [os.path.basename(p) for p in glob.glob(os.path.join(dump, "*.ptx"))])
