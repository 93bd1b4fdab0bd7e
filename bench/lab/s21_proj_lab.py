"""Session 21, call 13: GPT-2-small's K = 768 / 3072 projections (8192 rows, bf16) under each schedule and width:
the default (ping-pong 128x128 alone at N = 768: 384 tiles, FusedWide says 128), cooperative 128x256 (c256) and
128x128 (c128) alone, ping-pong in pairs (ppmcb), cooperative 128x256 in pairs (c256mcb). matmul_linear_lab's
method (CUPTI, median of 20 calls, one process, XLA command buffers off). S21_LAB=13: call 13's variants; unset: call
14's (the default after it against ping-pong).

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s21_proj_lab.py gpt
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matmul_linear_lab as lab  # noqa: E402

lab.VARIANTS.update({
    "c256": {"JK_MATMUL_WGMMA_SCHED": "coop", "JK_MATMUL_WGMMA": "256", "JK_MATMUL_WGMMA_MCB": "0"},
    "c128": {"JK_MATMUL_WGMMA_SCHED": "coop", "JK_MATMUL_WGMMA": "128", "JK_MATMUL_WGMMA_MCB": "0"},
    "pp": {"JK_MATMUL_WGMMA_SCHED": "pingpong", "JK_MATMUL_WGMMA_MCB": "0"},
    "ppmcb": {"JK_MATMUL_WGMMA_SCHED": "pingpong", "JK_MATMUL_WGMMA_MCB": "1"},
    "c256mcb": {"JK_MATMUL_WGMMA_SCHED": "coop", "JK_MATMUL_WGMMA": "256", "JK_MATMUL_WGMMA_MCB": "1"},
})
V = ("c256", "c128", "pp", "ppmcb", "c256mcb")
B = "bfloat16"
lab.CASES = [
    ("gpt qkv linear 8192x768x768 +bias", B, (8192, 768, 768), None, True, False, V),
    ("gpt o linear 8192x768x768 +bias +res", B, (8192, 768, 768), None, True, True, V),
    ("gpt proj linear 8192x768x3072 +bias +res", B, (8192, 768, 3072), None, True, True, V),
    ("gpt fc linear 8192x3072x768 +bias gelu", B, (8192, 3072, 768), "gelu", True, False, V),
    ("gpt plain matmul 8192x768x768", B, (8192, 768, 768), "mm", False, False, ("c128", "pp")),
]
if os.environ.get("S21_LAB") != "13":  # call 14: the new default (cooperative 128x128 at K <= 1024) against ping-pong
    lab.CASES = [(n, d, sh, a, b, r, ("pp",)) for n, d, sh, a, b, r, _ in lab.CASES[:4]]
if __name__ == "__main__":
    lab.main()
