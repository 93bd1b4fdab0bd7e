"""Session 22: exact float32 on small problems.

Calls 3 and 5: SimtPanel (the whole K panel of a tile copied to shared memory at once; 16x32 tiles of 64 threads
"panel16", 32x64 in two k groups "panel32"; bench/lab/s22_simt_panel.patch) against the double-buffered kernels
(JK_MATMUL_SIMT=nopanel: split-K clusters or the 32x64 tile).
S22_SIMT=ring (call 7): SimtRing (XLA's geometry: 16x32 tiles of 64 threads, a 4-stage cp.async ring of 32-deep
k-tiles; the default below one wave of 64x64 tiles in that build) and its 32x32 form (ring32) against the
double-buffered kernels (noring), and forced past one wave. S22_SIMT=ring2 (call 8): more shapes for the rule (the
ring where 64x64 tiles fill at most a quarter of the SMs). S22_SIMT=ring3 (call 9): the ring with each k-tile summed
apart (blocked summation) and K <= 2048 in the rule.
bench/lab/matmul_small_s4_lab.py's method: CUPTI, median of 20 calls, jnp in one process, XLA command buffers off.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= [S22_SIMT=ring|ring2|ring3] python bench/lab/s22_simt_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

HI = jax.lax.Precision.HIGHEST
if os.environ.get("S22_SIMT") == "ring":
    lab.VARIANTS.update({"noring": {"JK_MATMUL_SIMT": "noring"}, "ring16": {"JK_MATMUL_SIMT": "ring16"},
                         "ring32": {"JK_MATMUL_SIMT": "ring32"}, "ours2": {}})
    V = ("noring", "ring32", "ours2")
    F = ("noring", "ring16", "ring32")
else:
    lab.VARIANTS.update({"nopanel": {"JK_MATMUL_SIMT": "nopanel"}, "panel16": {"JK_MATMUL_SIMT": "panel16"},
                         "panel32": {"JK_MATMUL_SIMT": "panel32"}, "ours2": {}})
    V = ("nopanel", "panel32", "ours2")
    F = ("nopanel", "panel16", "panel32")
if os.environ.get("S22_SIMT") == "ring2":  # call 8: the rule (ring where 64x64 tiles fill <= 1/4 of the SMs)
    lab.VARIANTS.update({"noring": {"JK_MATMUL_SIMT": "noring"}, "ring16": {"JK_MATMUL_SIMT": "ring16"},
                         "ring32": {"JK_MATMUL_SIMT": "ring32"}})
    R = ("noring", "ring16", "ring32")
    CASES_RING2 = [(f"f32 HIGHEST {m}x{n}x{k}", jnp.float32, (m, n, k), "mm", HI, R) for m, n, k in [
        (64, 64, 64), (128, 128, 128), (100, 300, 200), (256, 256, 256), (384, 256, 256), (32, 2048, 2048),
        (2048, 32, 2048), (1000, 100, 100), (512, 128, 512), (128, 512, 4096), (256, 256, 4096), (384, 384, 384)]]
lab.CASES = [
    ("f32 HIGHEST 512x512x256", jnp.float32, (512, 512, 256), "mm", HI, V),
    ("f32 HIGHEST 512^3", jnp.float32, (512, 512, 512), "mm", HI, V),
    ("f32 HIGHEST 384^3", jnp.float32, (384, 384, 384), "mm", HI, V),
    ("f32 HIGHEST 256^3", jnp.float32, (256, 256, 256), "mm", HI, V),
    ("f32 HIGHEST 128^3", jnp.float32, (128, 128, 128), "mm", HI, V),
    ("f32 HIGHEST 256x1024x512", jnp.float32, (256, 1024, 512), "mm", HI, V),
    ("f32 HIGHEST 1000x100x100", jnp.float32, (1000, 100, 100), "mm", HI, V),
    ("f32 HIGHEST 256x512x1024", jnp.float32, (256, 512, 1024), "mm", HI, V),
    ("f32 HIGHEST 1024x1024x256", jnp.float32, (1024, 1024, 256), "mm", HI, F),
    ("f32 HIGHEST 768x768x512", jnp.float32, (768, 768, 512), "mm", HI, F),
]
if os.environ.get("S22_SIMT") == "ring2":
    lab.CASES = CASES_RING2
if os.environ.get("S22_SIMT") == "ring3":  # call 9: blocked summation over k-tiles, K <= 2048 in the rule
    lab.VARIANTS.update({"noring": {"JK_MATMUL_SIMT": "noring"}, "ours2": {}})
    lab.CASES = [(f"f32 HIGHEST {m}x{n}x{k}", jnp.float32, (m, n, k), "mm", HI, ("noring", "ours2")) for m, n, k in [
        (32, 2048, 2048), (2048, 32, 2048), (64, 64, 64), (128, 128, 128), (100, 300, 200), (1000, 100, 100),
        (256, 512, 1024), (256, 256, 256), (256, 256, 4096), (512, 512, 256)]]
if __name__ == "__main__":
    lab.main()
