"""Session 36: why int8 8192^2 (88.7% of copy on the 128x128 compact tile, call 3) trails (4, 4096, 4096) (0, 2, 1)
(91.2%, the same tile, tile count and bytes): int8 transposes of 134 MB moved in several shapes, each on the default
dispatch, 8192^2 also A fastest ("afast"). Method as bench/lab/s34_rowcopy_lab.py (CUPTI, best of 3 rotated rounds,
% of the 1 GiB copy ceiling, outputs compared with jnp's).

  python bench/lab/s36_shape_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

int8, run = base.int8, base.run
d = 1 if base.ON_GPU else 32
base.banner()
run("int8 8192x8192 (1, 0)", int8((8192 // d, 8192 // d)), (1, 0), ["default", "afast"])
for shape in ((4, 4096, 4096), (2, 8192, 4096), (2, 4096, 8192), (16, 2048, 2048)):
    run(f"int8 {shape} (0, 2, 1)", int8((shape[0],) + tuple(s // d for s in shape[1:])), (0, 2, 1), ["default"])
for shape in ((16384, 4096), (4096, 16384)):
    run(f"int8 {shape} (1, 0)", int8(tuple(s // d for s in shape)), (1, 0), ["default"])
