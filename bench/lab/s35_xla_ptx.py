"""Session 35: the PTX XLA emits for x * c (67 MB moved) and x + 1 over int8 8192^2, dumped with --xla_dump_to; prints
its global loads and stores (cache hints, widths) and the kernel's launch dimensions.

  python bench/lab/s35_xla_ptx.py DUMP_DIR
"""
import glob
import os
import re
import sys

d = sys.argv[1]
os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + f" --xla_dump_to={d}"
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

n = 32 * 128 * 64 * 64 * 2 // 4
x = jax.random.normal(jax.random.key(0), (n,), jnp.float32)
jax.block_until_ready(jax.jit(lambda x: x * jnp.float32(1.0001))(x))
for f in sorted(glob.glob(os.path.join(d, "*.ptx"))):
    text = open(f).read()
    if "multiply" not in text:
        continue
    print("====", os.path.basename(f))
    for line in text.splitlines():
        s = line.strip()
        if re.match(r"(ld|st|cp|prefetch|griddepcontrol|\.maxntid|\.reqntid|\.entry|\.visible)", s) or "ld.global" in s:
            print("  ", s)
