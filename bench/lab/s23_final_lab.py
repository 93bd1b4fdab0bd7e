"""Session 23, call 5 (S23_LAB=swz: call 12, a's rows swizzled against padded; JK_MATMUL_SIMT_RING_PAD existed in
that call's build only, 018ce7c; the swizzle lost and is bench/lab/s23_ring_swizzle.patch): exact float32 small problems on the final SimtRing (running copy pointers; 16-deep k-tiles in a
ring of 8 for K <= 128, else 32 x 4): the default dispatch against the double-buffered kernels (noring: split-K
clusters or the 32x64 tile) and the 32x32 ring tile (ring32), each twice (ours2, noring2).
bench/lab/matmul_small_s4_lab.py's method: CUPTI, median of 20 calls, jnp in one process, XLA command buffers off.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s23_final_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

HI = jax.lax.Precision.HIGHEST
lab.VARIANTS.update({"ours2": {}, "noring": {"JK_MATMUL_SIMT": "noring"}, "noring2": {"JK_MATMUL_SIMT": "noring"},
                     "ring16": {"JK_MATMUL_SIMT": "ring16"}, "ring32": {"JK_MATMUL_SIMT": "ring32"}})
V = ("ours2", "noring", "noring2", "ring16", "ring32")
lab.CASES = [(f"f32 HIGHEST {m}x{n}x{k}", jnp.float32, (m, n, k), "mm", HI, V) for m, n, k in [
    (512, 512, 256), (1000, 100, 100), (2000, 64, 48), (64, 64, 64), (128, 128, 128), (100, 300, 200),
    (256, 256, 256), (384, 256, 256), (256, 512, 1024), (32, 2048, 2048), (2048, 32, 2048), (512, 128, 512)]]
if os.environ.get("S23_LAB") == "swz":  # call 12: a's rows swizzled (default) against padded (JK_MATMUL_SIMT_RING_PAD=1)
    P = {"JK_MATMUL_SIMT_RING_PAD": "1"}
    lab.VARIANTS.update({"pad": P, "pad2": P, "ring16pad": {**P, "JK_MATMUL_SIMT": "ring16"}})
    VS = ("ours2", "pad", "pad2")
    lab.CASES = [(f"f32 HIGHEST {m}x{n}x{k}", jnp.float32, (m, n, k), "mm", HI, VS) for m, n, k in [
        (1000, 100, 100), (2000, 64, 48), (64, 64, 64), (128, 128, 128), (100, 300, 200), (256, 256, 256),
        (384, 256, 256), (256, 512, 1024), (32, 2048, 2048), (2048, 32, 2048), (512, 128, 512)]]
    lab.CASES.insert(0, ("f32 HIGHEST 512x512x256", jnp.float32, (512, 512, 256), "mm", HI,
                         ("ours2", "noring", "ring16", "ring16pad")))
if __name__ == "__main__":
    lab.main()
