"""Session 26: the exact float32 split-K kernels (SimtRegisterBlockedSplitKernel, 64x64 tiles) in three forms.

  old   session 16's: 16-lane warp rows reading two TM/2-wide halves (4 LDS.64 a k, 4 shared-memory wavefronts
        a warp), release cluster barriers (MEMBAR.ALL.GPU), the ranks' partial tiles read one load at a time
  lean  the same math; the barriers' releases restricted to shared memory (MEMBAR.ALL.CTA, a load wait) and a
        round's distributed-shared-memory loads issued together
  ours  lean plus 4 x 8 warps reading whole 16-byte vectors (2 LDS.128 a k, 2 wavefronts a warp)
"old2" repeats "old" last (drift). Call 1 only: those forms are gone since (they need
bench/lab/s26_call1_forms.patch on a7c4712). S26_LAB=2 (call 3) times the default twice ("again": drift) against
jnp. bench/lab/matmul_small_s4_lab.py's method: CUPTI, median of 20 calls, jnp in one process, XLA command buffers
off.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s26_simt_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

HI = jax.lax.Precision.HIGHEST
lab.VARIANTS.update({"old": {"JK_MATMUL_SIMT_SPLIT_FORM": "old"}, "lean": {"JK_MATMUL_SIMT_SPLIT_FORM": "lean"},
                     "old2": {"JK_MATMUL_SIMT_SPLIT_FORM": "old"}})
V = ("old", "lean", "old2")
if os.environ.get("S26_LAB") == "2":
    lab.VARIANTS["again"] = {}
    V = ("again",)
lab.CASES = [(f"f32 HIGHEST {m}x{n}x{k}", jnp.float32, (m, n, k), "mm", HI, V) for m, n, k in [
    (512, 512, 256), (512, 512, 512), (384, 384, 384), (256, 1024, 512), (256, 512, 1024), (512, 512, 1024),
    (384, 256, 256)]]
if __name__ == "__main__":
    lab.main()
