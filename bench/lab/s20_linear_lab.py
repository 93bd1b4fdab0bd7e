"""Session 20: the fused `linear` on the ping-pong schedule in multicast pairs along M sharing b
(JK_MATMUL_WGMMA_MCB=1: 256 x 128 pair tiles, a CTA reading 24 instead of 32 KiB of L2 a k-tile), and the
cooperative 128x256 pairs, against the default and the jnp composition. bench/lab/matmul_linear_lab.py's method
(CUPTI, median of 20 calls, one process, XLA command buffers off).

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s20_linear_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matmul_linear_lab as lab  # noqa: E402

lab.VARIANTS.update({
    "pp_mcb": {"JK_MATMUL_WGMMA_SCHED": "pingpong", "JK_MATMUL_WGMMA_MCB": "1"},
    "pp_mcb0": {"JK_MATMUL_WGMMA_SCHED": "pingpong", "JK_MATMUL_WGMMA_MCB": "1", "JK_MATMUL_WGMMA_BOXED": "0"},
    "c256_mcb": {"JK_MATMUL_WGMMA_SCHED": "coop", "JK_MATMUL_WGMMA": "256", "JK_MATMUL_WGMMA_MCB": "1"},
    "c256": {"JK_MATMUL_WGMMA_SCHED": "coop", "JK_MATMUL_WGMMA": "256", "JK_MATMUL_WGMMA_MCB": "0"},
    "ours_again": {},
    "nofold": {"JK_MATMUL_WGMMA_COOP_FOLD": "0"},  # call 9: the bias in the cooperative epilogue (before)
    "nofold_again": {"JK_MATMUL_WGMMA_COOP_FOLD": "0"},
    "c256_mcb_again": {"JK_MATMUL_WGMMA_SCHED": "coop", "JK_MATMUL_WGMMA": "256", "JK_MATMUL_WGMMA_MCB": "1"},
})
V = ("pp_mcb", "c256", "c256_mcb")
R = ("c256_mcb", "c256", "pp_mcb", "ours_again", "c256_mcb_again")  # call 8: repeats, alternating
CASES_7 = [
    ("linear bf16 4096^3 +bias gelu", "bfloat16", (4096, 4096, 4096), "gelu", True, False, V),
    ("linear bf16 4096^3 +bias gelu +res", "bfloat16", (4096, 4096, 4096), "gelu", True, True, V + ("pp_mcb0",)),
    ("linear bf16 3000^3 +bias gelu +res", "bfloat16", (3000, 3000, 3000), "gelu", True, True, V),
    ("linear bf16 4096x1000x4096 +bias gelu", "bfloat16", (4096, 1000, 4096), "gelu", True, False, V),
    ("linear bf16 8192^3 +bias gelu", "bfloat16", (8192, 8192, 8192), "gelu", True, False, ("pp_mcb",)),
]
CASES_8 = [
    ("linear bf16 4096^3 +bias gelu +res", "bfloat16", (4096, 4096, 4096), "gelu", True, True, R),
    ("linear bf16 4096^3 +bias gelu", "bfloat16", (4096, 4096, 4096), "gelu", True, False, R),
    ("linear bf16 4096^3 +bias", "bfloat16", (4096, 4096, 4096), None, True, False, R),
    ("linear bf16 4096^3 +bias silu +res", "bfloat16", (4096, 4096, 4096), "silu", True, True, R),
    ("linear f16 4096^3 +bias gelu +res", "float16", (4096, 4096, 4096), "gelu", True, True, R),
    ("linear bf16 2048x4096x4096 +bias gelu", "bfloat16", (2048, 4096, 4096), "gelu", True, False, R),
    ("linear bf16 16384x1024x4096 +bias gelu", "bfloat16", (16384, 1024, 4096), "gelu", True, False, R),
    ("linear bf16 4096x1000x4096 +bias gelu +res", "bfloat16", (4096, 1000, 4096), "gelu", True, True, R),
    ("linear bf16 3000^3 +bias gelu", "bfloat16", (3000, 3000, 3000), "gelu", True, False, R),
    ("linear bf16 8192^3 +bias gelu", "bfloat16", (8192, 8192, 8192), "gelu", True, False, ("c256_mcb",)),
]
F = ("nofold", "ours_again", "nofold_again")
CASES_9 = [  # call 11: the cooperative pairs with the bias folded into the accumulators (default) or not
    ("linear bf16 4096^3 +bias gelu +res", "bfloat16", (4096, 4096, 4096), "gelu", True, True, F),
    ("linear bf16 4096^3 +bias gelu", "bfloat16", (4096, 4096, 4096), "gelu", True, False, F),
    ("linear bf16 4096^3 +bias", "bfloat16", (4096, 4096, 4096), None, True, False, F),
    ("linear f16 4096^3 +bias gelu +res", "float16", (4096, 4096, 4096), "gelu", True, True, F),
    ("linear bf16 16384x1024x4096 +bias gelu", "bfloat16", (16384, 1024, 4096), "gelu", True, False, F),
    ("linear bf16 4096x1000x4096 +bias gelu +res", "bfloat16", (4096, 1000, 4096), "gelu", True, True, F),
    ("linear bf16 2048x4096x4096 +bias gelu", "bfloat16", (2048, 4096, 4096), "gelu", True, False, F),
]
lab.CASES = {"repeat": CASES_8, "fold": CASES_9}.get(os.environ.get("S20_LAB"), CASES_7)
if __name__ == "__main__":
    lab.main()
