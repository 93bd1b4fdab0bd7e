"""Session 22: the cooperative fused epilogue's two unrolled forms merged (the activation emitted once) and short-K
fused problems on the cooperative 128x128 tile (bench/lab/s21_coop128_short_k.patch), against ping-pong alone (pp)
and the jnp composition. bench/lab/matmul_linear_lab.py's method (CUPTI, median of 20 calls, one process, XLA
command buffers off). S22_LAB=4: call 6's (the next cooperative tile's bias prefetched into L1, against none: nopf); S22_LAB=3: call 3's (the defaults after the residual's short-K rule); S22_LAB=2: call 2's (the schedule rule alone, and short K on 128x256 tiles); S22_LAB=1: call 1's cases (the 4096^3 fused cases, which take the merged epilogue, and
GPT-2-small's projections, which take the new schedule rule).

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s22_linear_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matmul_linear_lab as lab  # noqa: E402

lab.VARIANTS.update({"ours_again": {}, "pp": {"JK_MATMUL_WGMMA_SCHED": "pingpong", "JK_MATMUL_WGMMA_MCB": "0"}})
B, H = "bfloat16", "float16"
A = ("ours_again",)
CASES_1 = [
    ("linear bf16 4096^3 +bias gelu", B, (4096, 4096, 4096), "gelu", True, False, A),
    ("linear bf16 4096^3 +bias gelu +res", B, (4096, 4096, 4096), "gelu", True, True, A),
    ("linear bf16 4096^3 +bias", B, (4096, 4096, 4096), None, True, False, A),
    ("linear f16 4096^3 +bias gelu +res", H, (4096, 4096, 4096), "gelu", True, True, A),
    ("linear bf16 4096^3 +bias silu +res", B, (4096, 4096, 4096), "silu", True, True, A),
    ("linear bf16 16384x1024x4096 +bias gelu", B, (16384, 1024, 4096), "gelu", True, False, A),
    ("gpt qkv linear 8192x768x768 +bias", B, (8192, 768, 768), None, True, False, ("pp",)),
    ("gpt o linear 8192x768x768 +bias +res", B, (8192, 768, 768), None, True, True, ("pp",)),
    ("gpt proj linear 8192x768x3072 +bias +res", B, (8192, 768, 3072), None, True, True, ("pp",)),
    ("gpt fc linear 8192x3072x768 +bias gelu", B, (8192, 3072, 768), "gelu", True, False, ("pp",)),
    ("linear bf16 2048x768x768 +bias gelu", B, (2048, 768, 768), "gelu", True, False, ("pp",)),
    ("linear bf16 8192x1024x1024 +bias gelu +res", B, (8192, 1024, 1024), "gelu", True, True, ("pp",)),
]
lab.VARIANTS.update({"c128": {"JK_MATMUL_WGMMA_SCHED": "coop", "JK_MATMUL_WGMMA": "128", "JK_MATMUL_WGMMA_MCB": "0"},
                     "c256": {"JK_MATMUL_WGMMA_SCHED": "coop", "JK_MATMUL_WGMMA": "256", "JK_MATMUL_WGMMA_MCB": "0"}})
S = ("pp", "c128", "c256")
CASES_2 = [  # call 2: the coop128 rule alone (the merged epilogue reverted), and short K on wide tiles
    ("gpt qkv linear 8192x768x768 +bias", B, (8192, 768, 768), None, True, False, S),
    ("gpt o linear 8192x768x768 +bias +res", B, (8192, 768, 768), None, True, True, S),
    ("linear bf16 8192x1024x1024 +bias gelu +res", B, (8192, 1024, 1024), "gelu", True, True, S),
    ("linear bf16 8192x1024x1024 +bias gelu", B, (8192, 1024, 1024), "gelu", True, False, S),
    ("linear bf16 8192x1024x1024 +bias", B, (8192, 1024, 1024), None, True, False, S),
    ("linear bf16 8192x2048x1024 +bias gelu +res", B, (8192, 2048, 1024), "gelu", True, True, S),
    ("linear bf16 8192x1024x512 +bias gelu +res", B, (8192, 1024, 512), "gelu", True, True, S),
    ("linear bf16 8192x1024x2048 +bias gelu +res", B, (8192, 1024, 2048), "gelu", True, True, S),
    ("linear bf16 4096^3 +bias gelu +res", B, (4096, 4096, 4096), "gelu", True, True, A),
    ("linear bf16 4096^3 +bias gelu", B, (4096, 4096, 4096), "gelu", True, False, A),
]
CASES_3 = [  # call 3: the defaults after the residual's short-K rule (kWideResMaxShortK)
    ("linear bf16 8192x1024x1024 +bias gelu +res", B, (8192, 1024, 1024), "gelu", True, True, A),
    ("linear bf16 8192x2048x1024 +bias gelu +res", B, (8192, 2048, 1024), "gelu", True, True, A),
    ("linear bf16 8192x1024x512 +bias gelu +res", B, (8192, 1024, 512), "gelu", True, True, A),
    ("linear bf16 8192x1024x2048 +bias gelu +res", B, (8192, 1024, 2048), "gelu", True, True, A),
    ("linear bf16 4096^3 +bias gelu +res", B, (4096, 4096, 4096), "gelu", True, True, A),
]
lab.VARIANTS.update({"nopf": {"JK_MATMUL_WGMMA_BIAS_PF": "0"}, "nopf_again": {"JK_MATMUL_WGMMA_BIAS_PF": "0"}})
P = ("nopf", "ours_again", "nopf_again")
CASES_4 = [  # call 6: the next cooperative tile's bias prefetched into L1 (default) against none (nopf)
    ("gpt qkv linear 8192x768x768 +bias", B, (8192, 768, 768), None, True, False, P),
    ("gpt o linear 8192x768x768 +bias +res", B, (8192, 768, 768), None, True, True, P),
    ("linear bf16 4096^3 +bias", B, (4096, 4096, 4096), None, True, False, P),
    ("linear bf16 4096^3 +bias gelu", B, (4096, 4096, 4096), "gelu", True, False, P),
    ("linear bf16 4096^3 +bias gelu +res", B, (4096, 4096, 4096), "gelu", True, True, P),
    ("linear f16 4096^3 +bias gelu +res", H, (4096, 4096, 4096), "gelu", True, True, P),
    ("linear bf16 16384x1024x4096 +bias gelu", B, (16384, 1024, 4096), "gelu", True, False, P),
    ("linear bf16 8192x1024x1024 +bias", B, (8192, 1024, 1024), None, True, False, P),
    ("gpt fc linear 8192x3072x768 +bias gelu", B, (8192, 3072, 768), "gelu", True, False, P),
    ("linear bf16 2048x768x768 +bias gelu", B, (2048, 768, 768), "gelu", True, False, P),
    ("matmul bf16 4096^3", B, (4096, 4096, 4096), "mm", False, False, A),
]
lab.CASES = {"1": CASES_1, "2": CASES_2, "3": CASES_3, "4": CASES_4}[os.environ.get("S22_LAB", "1")]
if __name__ == "__main__":
    lab.main()
