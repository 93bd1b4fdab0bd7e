"""Session 36: the 256x256-byte int8 tile with its loads as cp.async copies into the swizzled tile ("wideasync": no
register staging, 40 registers, 3 CTAs of 512 threads an SM against the staged form's 62 and 2), below the wide tile's
threshold ("wide,wideasync") and at 16384^2, where the wide tile is the default. Calls 3 and 9 found the staged wide
tile and the 128-thread 128x128 tile slower than the default at 8192^2. Method as bench/lab/s34_rowcopy_lab.py (CUPTI,
best of 3 rotated rounds, % of the 1 GiB copy ceiling, outputs compared with jnp's).

  python bench/lab/s36_wideasync_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

int8, run = base.int8, base.run
d = 1 if base.ON_GPU else 32
base.banner()
W = ["default", "wide", "wide,wideasync"]
run("int8 8192x8192 (1, 0)", int8((8192 // d, 8192 // d)), (1, 0), W)
run("int8 6144x6144 (1, 0)", int8((6144 // d, 6144 // d)), (1, 0), W)
run("int8 (4, 4096, 4096) (0, 2, 1)", int8((4, 4096 // d, 4096 // d)), (0, 2, 1), W)
run("int8 8192x16384 (1, 0)", int8((8192 // d, 16384 // d)), (1, 0), W)
run("int8 16384x16384 (1, 0)", int8((16384 // d, 16384 // d)), (1, 0), ["default", "wideasync"])
run("int8 (3, 8200, 8200) (0, 2, 1) ragged", int8((3, 8200 // d, 8200 // d)), (0, 2, 1), W)
