"""What XLA launches for the latency-bound 2048x512 transposes, next to ours (run under ncu / with an XLA dump).

  XLA_FLAGS=--xla_dump_to=DIR ncu --kernel-name regex:... --section LaunchStats python3 transpose_xla_geometry.py [DIR]

Runs jnp.transpose, jax_kernels.transpose and an elementwise -x (XLA's copy-like loop kernel) on 2048x512
float32 / bfloat16 / int8 a few times each (no CUPTI: ncu profiles the launches), then, if DIR is given,
prints the entry points and block-size directives (.reqntid / .maxntid) of the PTX XLA dumped there.
"""
import glob
import os
import re
import sys

import jax
import jax.numpy as jnp

import jax_kernels as jk


def main():
    for dt in (jnp.float32, jnp.bfloat16, jnp.int8):
        x = jax.random.normal(jax.random.key(0), (2048, 512), jnp.float32)
        x = (x * 40).astype(dt) if dt == jnp.int8 else x.astype(dt)
        fns = {"jnp": jax.jit(lambda t: jnp.transpose(t, (1, 0))),
               "jk": jax.jit(lambda t: jk.transpose(t, (1, 0))),
               "neg": jax.jit(lambda t: -t)}
        for name, f in fns.items():
            for _ in range(2):
                f(x).block_until_ready()
            print(f"ran {name} {jnp.dtype(dt).name}", flush=True)
    if len(sys.argv) > 1:
        for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.ptx"))):
            text = open(p).read()
            if "transpose" not in text and "negate" not in text:
                continue
            print("==", os.path.basename(p))
            for m in re.finditer(r"\.entry\s+(\w+)|\.(reqntid|maxntid)\s+([\d, ]+)", text):
                print("  ", m.group(0).strip())
            # vector widths and instruction mix of the kernel body
            for op in ("ld.global", "st.global", "ld.shared", "st.shared", "bar.sync", "shfl", "prmt"):
                n = len(re.findall(re.escape(op) + r"[\w.]*", text))
                if n:
                    widths = sorted(set(re.findall(re.escape(op) + r"(?:\.\w+)*?\.(v\d)", text)))
                    print(f"   {op}: {n} {widths}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
