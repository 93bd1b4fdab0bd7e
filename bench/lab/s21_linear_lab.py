"""Session 21: the boxed fused epilogue in an unrolled form (JK_MATMUL_WGMMA_EPI_UNROLL=1: the activation on the
accumulators, which already hold the folded bias, then StoreTileTmaUnrolled: a plain matmul's unrolled box stores
plus the residual pairs TMA loaded into the boxes), against the default (the loop form), on the cooperative pairs
(the default at these sizes), the cooperative 128x256 alone (c256) and ping-pong alone (pp), against the jnp
composition and the plain matmul. bench/lab/matmul_linear_lab.py's method (CUPTI, median of 20 calls, one process,
XLA command buffers off). S21_LAB=1: call 3's cases (no residual; the unrolled form then had no residual path);
S21_LAB=2: call 4's (a general unrolled form, residual included, on both schedules: bench/lab/s21_unrolled_general.patch);
S21_LAB=3: call 5's (then JK_MATMUL_WGMMA_EPI_UNROLL=2 forced the residual's unrolled form, StoreTileTmaRes, now the
default where the tile runs alone); S21_LAB=4: call 6's; unset: call 8's.

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s21_linear_lab.py 4096,1000,3000
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matmul_linear_lab as lab  # noqa: E402

U = {"JK_MATMUL_WGMMA_EPI_UNROLL": "1"}
C = {"JK_MATMUL_WGMMA_SCHED": "coop", "JK_MATMUL_WGMMA": "256", "JK_MATMUL_WGMMA_MCB": "0"}
P = {"JK_MATMUL_WGMMA_SCHED": "pingpong", "JK_MATMUL_WGMMA_MCB": "0"}
lab.VARIANTS.update({"unroll": U, "c256": C, "c256_unroll": {**C, **U}, "ours_again": {}, "unroll_again": U,
                     "pp": P, "pp_unroll": {**P, **U}})
V = ("unroll", "c256", "c256_unroll", "ours_again", "unroll_again")
W = ("unroll", "c256_unroll", "pp", "pp_unroll", "ours_again", "unroll_again")
CASES_1 = [  # call 3
    ("linear bf16 4096^3 +bias", "bfloat16", (4096, 4096, 4096), None, True, False, V),
    ("linear bf16 4096^3 +bias gelu", "bfloat16", (4096, 4096, 4096), "gelu", True, False, V),
    ("matmul bf16 4096^3", "bfloat16", (4096, 4096, 4096), "mm", False, False, ("ours_again",)),
    ("linear f16 4096^3 +bias", "float16", (4096, 4096, 4096), None, True, False, V),
    ("linear bf16 4096^3 +bias gelu_tanh", "bfloat16", (4096, 4096, 4096), "gelu_tanh", True, False, V),
    ("linear bf16 16384x1024x4096 +bias gelu", "bfloat16", (16384, 1024, 4096), "gelu", True, False, V),
    ("linear bf16 4096^3 +bias gelu +res", "bfloat16", (4096, 4096, 4096), "gelu", True, True, V),
    ("linear bf16 4096x1000x4096 +bias gelu", "bfloat16", (4096, 1000, 4096), "gelu", True, False, V),
    ("linear bf16 8192^3 +bias gelu", "bfloat16", (8192, 8192, 8192), "gelu", True, False, ("unroll",)),
]
CASES_2 = [  # call 4: the residual path too, and ping-pong
    ("linear bf16 4096^3 +bias gelu +res", "bfloat16", (4096, 4096, 4096), "gelu", True, True, W),
    ("linear bf16 4096^3 +bias gelu", "bfloat16", (4096, 4096, 4096), "gelu", True, False, W),
    ("linear f16 4096^3 +bias gelu +res", "float16", (4096, 4096, 4096), "gelu", True, True, W),
    ("linear bf16 4096^3 +bias silu +res", "bfloat16", (4096, 4096, 4096), "silu", True, True, W),
    ("linear bf16 4096^3 +bias", "bfloat16", (4096, 4096, 4096), None, True, False, W),
    ("linear bf16 4096^3 gelu", "bfloat16", (4096, 4096, 4096), "gelu", False, False, ("unroll", "ours_again")),
    ("linear bf16 4096x1000x4096 +bias gelu +res", "bfloat16", (4096, 1000, 4096), "gelu", True, True, W),
    ("linear bf16 3000^3 +bias gelu", "bfloat16", (3000, 3000, 3000), "gelu", True, False, W),
    ("linear bf16 2048x4096x4096 +bias gelu +res", "bfloat16", (2048, 4096, 4096), "gelu", True, True, W),
    ("linear bf16 16384x1024x4096 +bias gelu", "bfloat16", (16384, 1024, 4096), "gelu", True, False, W),
]
R = {"JK_MATMUL_WGMMA_EPI_UNROLL": "2"}
L = {"JK_MATMUL_WGMMA_EPI_UNROLL": "0"}
lab.VARIANTS.update({"ur": R, "c256_ur": {**C, **R}, "ur_again": R, "loop": L, "loop_again": L})
X = ("ur", "c256_ur", "ours_again", "ur_again")
CASES_3 = [  # call 5: the residual's unrolled form (JK_MATMUL_WGMMA_EPI_UNROLL=2), against the loop form (default)
    ("linear bf16 4096^3 +bias gelu +res", "bfloat16", (4096, 4096, 4096), "gelu", True, True, X),
    ("linear f16 4096^3 +bias gelu +res", "float16", (4096, 4096, 4096), "gelu", True, True, X),
    ("linear bf16 4096^3 +bias silu +res", "bfloat16", (4096, 4096, 4096), "silu", True, True, X),
    ("linear bf16 4096^3 +res", "bfloat16", (4096, 4096, 4096), None, False, True, X),
    ("linear bf16 4096x1000x4096 +bias gelu +res", "bfloat16", (4096, 1000, 4096), "gelu", True, True, X),
    ("linear bf16 2048x4096x4096 +bias gelu +res", "bfloat16", (2048, 4096, 4096), "gelu", True, True, X),
    ("linear bf16 16384x1024x4096 +bias gelu +res", "bfloat16", (16384, 1024, 4096), "gelu", True, True, X),
    # the committed default (5e4c500) against the loop form it replaced, no residual
    ("linear bf16 4096^3 +bias gelu", "bfloat16", (4096, 4096, 4096), "gelu", True, False,
     ("loop", "ours_again", "loop_again")),
    ("linear bf16 4096^3 +bias", "bfloat16", (4096, 4096, 4096), None, True, False, ("loop", "ours_again", "loop_again")),
]
# call 6: the new defaults (pairs only where N % 16 == 8; the residual unrolled where the tile runs alone) against
# session 20's choice on aligned N (pairs, the loop form: "s20") and the pairs with the no-residual unrolled form
# (5e4c500: "prev")
lab.VARIANTS.update({"s20": {"JK_MATMUL_WGMMA_MCB": "1", "JK_MATMUL_WGMMA_EPI_UNROLL": "0"},
                     "prev": {"JK_MATMUL_WGMMA_MCB": "1", "JK_MATMUL_WGMMA_EPI_UNROLL": "1"},
                     "resloop": {"JK_MATMUL_WGMMA_EPI_UNROLL": "1"}})
Y = ("s20", "prev", "resloop", "ours_again")
CASES_4 = [
    ("linear bf16 4096^3 +bias gelu +res", "bfloat16", (4096, 4096, 4096), "gelu", True, True, Y),
    ("linear bf16 4096^3 +bias gelu", "bfloat16", (4096, 4096, 4096), "gelu", True, False, Y),
    ("linear f16 4096^3 +bias gelu +res", "float16", (4096, 4096, 4096), "gelu", True, True, Y),
    ("linear bf16 4096^3 +bias", "bfloat16", (4096, 4096, 4096), None, True, False, Y),
    ("linear bf16 4096^3 +bias silu +res", "bfloat16", (4096, 4096, 4096), "silu", True, True, Y),
    ("linear bf16 2048x4096x4096 +bias gelu +res", "bfloat16", (2048, 4096, 4096), "gelu", True, True, Y),
    # ping-pong alone by both rules ("s20" would force ping-pong pairs here)
    ("linear bf16 3072^3 +bias gelu +res", "bfloat16", (3072, 3072, 3072), "gelu", True, True, ("ours_again",)),
    ("linear bf16 8192^3 +bias gelu +res", "bfloat16", (8192, 8192, 8192), "gelu", True, True, ("s20",)),
    ("linear bf16 4096x1000x4096 +bias gelu +res", "bfloat16", (4096, 1000, 4096), "gelu", True, True, ("s20",)),
    ("linear bf16 3000^3 +bias gelu", "bfloat16", (3000, 3000, 3000), "gelu", True, False, ("s20",)),
]
# call 8: the bias-fold rule decided once (bias_folded); ours only, to compare ratios with call 6's
O = ("ours_again",)
CASES_5 = [(n, d, s, a, b, r, O) for n, d, s, a, b, r, _ in CASES_4 if "8192" not in n]
lab.CASES = {"1": CASES_1, "2": CASES_2, "3": CASES_3, "4": CASES_4}.get(os.environ.get("S21_LAB"), CASES_5)
if __name__ == "__main__":
    lab.main()
