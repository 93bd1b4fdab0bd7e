"""Session 36: the compact int8 big tile (128x128 bytes, B fastest) with 128 threads ("big128t": 8 loads a thread, 48
registers, 10 CTAs an SM) against its 256 (4 loads, 32 registers, 8 CTAs an SM): 25% more tile bytes in flight per SM.
int8 8192^2 sits at 88-90% of copy on the 256-thread form. Method as bench/lab/s34_rowcopy_lab.py (CUPTI, best of 3
rotated rounds, % of the 1 GiB copy ceiling, outputs compared with jnp's).

  python bench/lab/s36_big128t_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

int8, run = base.int8, base.run
d = 1 if base.ON_GPU else 32
base.banner()
V = ["default", "big128t"]
run("int8 8192x8192 (1, 0)", int8((8192 // d, 8192 // d)), (1, 0), V)
run("int8 6144x6144 (1, 0)", int8((6144 // d, 6144 // d)), (1, 0), V)
run("int8 (4, 4096, 4096) (0, 2, 1)", int8((4, 4096 // d, 4096 // d)), (0, 2, 1), V)
run("int8 8192x16384 (1, 0)", int8((8192 // d, 16384 // d)), (1, 0), V)
run("int8 4096x4096 (1, 0)", int8((4096 // d, 4096 // d)), (1, 0), V)
