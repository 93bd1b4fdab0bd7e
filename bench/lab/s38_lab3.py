"""Session 38, call 4: int8 8192^2 (88.8-89.8% of copy; issue 5 asks 90%) with its 128x128 tiles in square groups of
8, 16 or 32 tiles ("super8" / "super16" / "super32": the blocks in flight cover a square of the matrix; by default they
cover whole output rows against a column strip of every input row), against the default and "grid1" (the 1-D grid);
other 2-D int8 shapes on the same tile as a check. Method as s38_lab.py (5 rotated rounds). The groups lost (8192^2
88.6% -> 84.6% at 32, bench/lab/s38_labs_h200.txt) and their tokens were removed after call 4: on later builds this
script times the default under each name.
  python bench/lab/s38_lab3.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

int8, run = base.int8, base.run
d = 1 if base.ON_GPU else 32
base.banner()
base.ROUNDS = 5 if base.ON_GPU else 1
V = ["default", "grid1", "super8", "super16", "super32"]
run("int8 8192^2", int8((8192 // d, 8192 // d)), (1, 0), V)
run("int8 16384x4096", int8((16384 // d, 4096 // d)), (1, 0), ["default", "super16", "super32"])
run("int8 4096x16384", int8((4096 // d, 16384 // d)), (1, 0), ["default", "super16", "super32"])
run("int8 8192^2 again", int8((8192 // d, 8192 // d)), (1, 0), ["default", "super32"])
