"""Session 36: 1-byte transposes on the 256x256-byte tile below its size threshold (JK_TRANSPOSE_TIERS "wide": the
256x256 tile with 512 threads wherever there are two waves of big tiles; "wide1k": the same tile with 1024 threads),
against the default (the 128x128 compact tile below 16 wide tiles an SM, the wide tile from there). int8 8192^2 sat at
88.4-90.1% of the copy ceiling in session 35 on the 128x128 tile. Method as bench/lab/s34_rowcopy_lab.py (CUPTI,
best of 3 rotated rounds, % of the 1 GiB copy ceiling, outputs compared with jnp's).

  python bench/lab/s36_wide_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

int8, run = base.int8, base.run
d = 1 if base.ON_GPU else 32
base.banner()
W = ["default", "wide", "wide1k"]
run("int8 8192x8192 (1, 0)", int8((8192 // d, 8192 // d)), (1, 0), W)
run("int8 6144x6144 (1, 0)", int8((6144 // d, 6144 // d)), (1, 0), W)
run("int8 8192x16384 (1, 0)", int8((8192 // d, 16384 // d)), (1, 0), W)
run("int8 (4, 4096, 4096) (0, 2, 1)", int8((4, 4096 // d, 4096 // d)), (0, 2, 1), W)
run("int8 16384x16384 (1, 0)", int8((16384 // d, 16384 // d)), (1, 0), ["default", "wide1k"])
