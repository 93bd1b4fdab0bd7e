"""Exact float32 matmul (precision HIGHEST, SimtRegisterBlocked 128x128): a's k-major tile swizzled (session 8
default, conflict-free stash) against the layout of before (JK_MATMUL_SIMT=noswizzle), against jnp.

One process on the GPU, XLA command buffers off (the knob is read at every launch): CUPTI kernel time
(profiler.measure), the lower of two medians of 10 calls, variants and jnp alternating. err = max |ours - jnp| /
max |jnp| (both float32 exact-product sums; ~1e-6 expected).

  python bench/lab/simt_swizzle_lab.py [--shapes MxNxK,...] [--variants name=KNOB,...]

--variants (session 13): the JK_MATMUL_SIMT values to time, e.g. "swizzle=,noswizzle=noswizzle" (an empty knob: the
default); each gets a jnp/variant column.
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from norm_half_lab import lab_measure, median_ms  # noqa: E402

import jax_kernels as jk  # noqa: E402

HIGHEST = jax.lax.Precision.HIGHEST


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="4096x4096x4096,2048x2048x2048,8192x8192x2048")
    ap.add_argument("--variants", default="swizzle=,noswizzle=noswizzle")
    a = ap.parse_args()
    variants = [(name, knob or None) for name, knob in (v.split("=", 1) for v in a.variants.split(","))]
    measure = lab_measure()
    print(f"device: {jax.devices()[0].device_kind}")
    print("| case | " + " | ".join(v for v, _ in variants) + " | jnp | "
          + " | ".join(f"jnp/{v}" for v, _ in variants) + " | err |")
    print("|---|" + "---:|" * (2 * len(variants) + 2))
    for spec in a.shapes.split(","):
        m, n, k = map(int, spec.split("x"))
        ka, kb = jax.random.split(jax.random.key(m + n + k))
        x = jax.random.normal(ka, (m, k), jnp.float32)
        w = jax.random.normal(kb, (k, n), jnp.float32)
        ours = jax.jit(lambda p, q: jk.matmul(p, q, precision=HIGHEST))
        theirs = jax.jit(lambda p, q: jnp.matmul(p, q, precision=HIGHEST))
        ref = theirs(x, w)
        best = {}
        errs = []
        for rep in range(2):
            order = variants if rep == 0 else variants[::-1]
            best.setdefault("jnp", []).append(median_ms(measure, theirs, (x, w), 10))
            for name, knob in order:
                os.environ.pop("JK_MATMUL_SIMT", None)
                if knob:
                    os.environ["JK_MATMUL_SIMT"] = knob
                if rep == 0:
                    y = ours(x, w)
                    errs.append(float(jnp.max(jnp.abs(y - ref)) / jnp.max(jnp.abs(ref))))
                best.setdefault(name, []).append(median_ms(measure, ours, (x, w), 10))
        os.environ.pop("JK_MATMUL_SIMT", None)
        t = {kk: min(v) * 1e3 for kk, v in best.items()}
        cells = " | ".join(f"{t[v]:.1f}" for v, _ in variants)
        ratios = " | ".join(f"{t['jnp'] / t[v]:.3f}x" for v, _ in variants)
        print(f"| {spec} | {cells} | {t['jnp']:.1f} | {ratios} | {max(errs):.1e} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
