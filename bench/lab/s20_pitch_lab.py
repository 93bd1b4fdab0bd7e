"""Session 20: where do bf16 matmuls with N off a 32-byte row pitch lose their time (3000^3 ran 0.56-0.63x jnp,
while K off 128 bytes costs nothing: bench/lab/matmul_pitch_h200.md)? The output's TMA stores against 16-byte
global stores (JK_MATMUL_WGMMA_EPI=row8), and N on 32-byte (sector) against 128-byte row pitches, per tile width.
Method as bench/lab/matmul_small_s4_lab.py (CUPTI, median of 20 calls, one process, XLA command buffers off).

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s20_pitch_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax.numpy as jnp  # noqa: E402

import matmul_small_s4_lab as lab  # noqa: E402

R8 = {"JK_MATMUL_WGMMA_EPI": "row8"}
lab.VARIANTS.update({
    "row8": dict(R8),
    "w128": {"JK_MATMUL_WGMMA": "128"},
    "w256": {"JK_MATMUL_WGMMA": "256"},
    "w128r8": {**R8, "JK_MATMUL_WGMMA": "128"},
    "w256r8": {**R8, "JK_MATMUL_WGMMA": "256"},
    # 128x256 tiles in clusters of 2 along M sharing b's panels through TMA multicast (kShareB)
    "mcb": {"JK_MATMUL_WGMMA": "256", "JK_MATMUL_WGMMA_MCB": "1"},
    "nomcb": {"JK_MATMUL_WGMMA_MCB": "0"},
    "w64mc1": {"JK_MATMUL_WGMMA": "64", "JK_MATMUL_WGMMA_MC": "1"},
    "w64": {"JK_MATMUL_WGMMA": "64", "JK_MATMUL_WGMMA_MC": "0"},
    "nomc": {"JK_MATMUL_WGMMA_MC": "0", "JK_MATMUL_WGMMA_MCB": "0"},  # no pairs (the dispatch before call 6)
    "w64mcb": {"JK_MATMUL_WGMMA": "64", "JK_MATMUL_WGMMA_MCB": "1"},
    "mca": {"JK_MATMUL_WGMMA": "256", "JK_MATMUL_WGMMA_MC": "1"},
})
V = ("row8", "w128", "w256", "w128r8", "w256r8")
B = jnp.bfloat16
V2 = ("w256", "mcb")
CASES_PITCH = [  # call 2: (M, N, K); pitch of N: bytes mod 32 / mod 128
    ("bf16 3000^3 (N pitch 16/112)", B, (3000, 3000, 3000), "mm", None, V),
    ("bf16 3000x3024x3000 (N pitch 0/32)", B, (3000, 3024, 3000), "mm", None, V),
    ("bf16 3000x3008x3000 (N pitch 0/0)", B, (3000, 3008, 3000), "mm", None, V),
    ("bf16 3008x3000x3008 (N 16/112, K aligned)", B, (3008, 3000, 3008), "mm", None, V),
    ("bf16 3072^3", B, (3072, 3072, 3072), "mm", None, V),
    ("bf16 4096x1000x4096 (N 16/80)", B, (4096, 1000, 4096), "mm", None, V),
    ("bf16 4096x1008x4096 (N 0/96)", B, (4096, 1008, 4096), "mm", None, V),
    ("bf16 1000^3 (L2)", B, (1000, 1000, 1000), "mm", None, ("row8",)),
    ("bf16 1000x1008x1000 (L2)", B, (1000, 1008, 1000), "mm", None, ("row8",)),
    ("bf16 2000^3", B, (2000, 2000, 2000), "mm", None, ("row8",)),
]
CASES_MCB = [  # call 3: multicast pairs sharing b
    ("bf16 3000^3", B, (3000, 3000, 3000), "mm", None, V2),
    ("bf16 4096^3", B, (4096, 4096, 4096), "mm", None, V2),
    ("f16 4096^3", jnp.float16, (4096, 4096, 4096), "mm", None, V2),
    ("bf16 3000x3008x3000", B, (3000, 3008, 3000), "mm", None, V2),
    ("bf16 3008x3000x3008", B, (3008, 3000, 3008), "mm", None, V2),
    ("bf16 3072^3", B, (3072, 3072, 3072), "mm", None, V2),
    ("bf16 16384x1024x4096", B, (16384, 1024, 4096), "mm", None, V2),
    ("bf16 4096x1000x4096", B, (4096, 1000, 4096), "mm", None, V2),
    ("bf16 2000^3", B, (2000, 2000, 2000), "mm", None, V2),
    ("bf16 8192^3", B, (8192, 8192, 8192), "mm", None, V2),
    ("bf16 6000x6000x6000", B, (6000, 6000, 6000), "mm", None, V2),
]
CASES_RULE = [  # call 4: the default rule (pairs sharing b on 128x256 tiles where N % 16 == 8) against it off
    ("bf16 3000^3", B, (3000, 3000, 3000), "mm", None, ("nomcb",)),
    ("f16 3000^3", jnp.float16, (3000, 3000, 3000), "mm", None, ("nomcb",)),
    ("bf16 4096x1000x4096", B, (4096, 1000, 4096), "mm", None, ("nomcb",)),
    ("bf16 8192x1000x8192", B, (8192, 1000, 8192), "mm", None, ("nomcb",)),
    ("bf16 3008x3000x3008", B, (3008, 3000, 3008), "mm", None, ("nomcb",)),
    ("bf16 2000x3000x2000", B, (2000, 3000, 2000), "mm", None, ("nomcb",)),
    ("bf16 4000x1000x4000", B, (4000, 1000, 4000), "mm", None, ("nomcb",)),
    ("bf16 8192x5000x2048", B, (8192, 5000, 2048), "mm", None, ("nomcb",)),
    ("bf16 1000^3 (L2)", B, (1000, 1000, 1000), "mm", None, ("w64mc1",)),
    ("bf16 1000x1008x1000 (L2)", B, (1000, 1008, 1000), "mm", None, ("w64mc1",)),
    ("bf16 768x1000x768", B, (768, 1000, 768), "mm", None, ("w64mc1",)),
    ("bf16 4096^3", B, (4096, 4096, 4096), "mm", None, ("nomcb",)),
]
W64 = ("w64", "w64mc1", "w64mcb")
CASES_SMALL = [  # call 5: 128x64 tiles alone, sharing a, sharing b; 128x256 sharing a where K % 16 == 8
    ("bf16 1000^3 (L2)", B, (1000, 1000, 1000), "mm", None, W64),
    ("bf16 1000x1008x1000 (L2)", B, (1000, 1008, 1000), "mm", None, W64),
    ("bf16 1024x1000x1024 (L2)", B, (1024, 1000, 1024), "mm", None, W64),
    ("bf16 1024x1024x1000 (L2)", B, (1024, 1024, 1000), "mm", None, W64),
    ("bf16 1024^3 (L2)", B, (1024, 1024, 1024), "mm", None, W64),
    ("bf16 768x1000x768", B, (768, 1000, 768), "mm", None, W64),
    ("bf16 512x1000x1000", B, (512, 1000, 1000), "mm", None, W64),
    ("bf16 1000x1000x4000", B, (1000, 1000, 4000), "mm", None, W64),
    ("bf16 3000^3", B, (3000, 3000, 3000), "mm", None, ("mca",)),
    ("bf16 3000x3008x3000", B, (3000, 3008, 3000), "mm", None, ("w256", "mca")),
    ("bf16 4096x4096x3000", B, (4096, 4096, 3000), "mm", None, ("w256", "mca")),
]
CASES_FINAL = [  # call 6: the committed default against no pairs
    ("bf16 1000^3 (L2)", B, (1000, 1000, 1000), "mm", None, ("nomc",)),
    ("bf16 1000x1008x1000 (L2)", B, (1000, 1008, 1000), "mm", None, ("nomc",)),
    ("bf16 1000x1000x4000", B, (1000, 1000, 4000), "mm", None, ("nomc",)),
    ("bf16 1024x1024x1000 (L2)", B, (1024, 1024, 1000), "mm", None, ("nomc",)),
    ("bf16 3000^3", B, (3000, 3000, 3000), "mm", None, ("nomc",)),
    ("bf16 4096x1000x4096", B, (4096, 1000, 4096), "mm", None, ("nomc",)),
    ("bf16 1024^3 (L2)", B, (1024, 1024, 1024), "mm", None, ("nomc",)),
    ("bf16 4096^3", B, (4096, 4096, 4096), "mm", None, ("nomc",)),
]
lab.CASES = {"mcb": CASES_MCB, "rule": CASES_RULE, "small": CASES_SMALL, "final": CASES_FINAL}.get(os.environ.get("S20_LAB"), CASES_PITCH)
if __name__ == "__main__":
    lab.main()
