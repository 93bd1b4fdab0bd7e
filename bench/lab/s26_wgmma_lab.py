"""Session 26: the wgmma kernel's opening cluster barrier (split-K and multicast pairs) relaxed (the default now:
thread 0's fence.mbarrier_init releases the barriers' initialisation) against its release form ("strict",
JK_MATMUL_WGMMA_START=strict: a MEMBAR.ALL.GPU in every thread first). "strict2" repeats "strict" last (drift).
No effect (call 1): reverted; the knob exists only with bench/lab/s26_call1_forms.patch applied on a7c4712.
bench/lab/matmul_small_s4_lab.py's method: CUPTI, median of 20 calls, jnp in one process, XLA command buffers off.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s26_wgmma_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

lab.VARIANTS.update({"strict": {"JK_MATMUL_WGMMA_START": "strict"}, "strict2": {"JK_MATMUL_WGMMA_START": "strict"}})
V = ("strict", "strict2")
lab.CASES = [(f"bf16 {m}x{n}x{k}", jnp.bfloat16, (m, n, k), "mm", None, V) for m, n, k in [
    (1000, 1000, 1000), (1024, 1024, 1024), (768, 768, 768), (512, 1000, 1000), (1000, 1000, 4000),
    (3000, 3000, 3000), (1000, 1008, 1000)]]
lab.CASES += [("bf16 linear 4096x1000x4096 + bias gelu", jnp.bfloat16, (4096, 1000, 4096), "lin", None, V)]
if __name__ == "__main__":
    lab.main()
