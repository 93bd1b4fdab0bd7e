"""Session 37, prepared for the next session and run in session 38 (call 1, bench/lab/s38_labs_h200.txt): "padwordout"
lost on every case and the token was removed, so this script now times the default twice. Word stores of odd y rows on the
padded tiles for int8 ("padwordout": each aligned output word's 4 bytes gathered from the tile, the partial words at a
row's two edges written byte by byte) against the default (element stores), on the cases where y's rows are odd. Method
as bench/lab/s34_rowcopy_lab.py (CUPTI, best of 3 rotated rounds, % of the 1 GiB copy ceiling, outputs compared with
jnp's).

  python bench/lab/s37_wordout_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

int8, run = base.int8, base.run
d = 1 if base.ON_GPU else 32
base.banner()
V = ["default", "padwordout"]
run("int8 (8193, 8192) (1, 0): x aligned, y odd", int8((8193 // d, 8192)), (1, 0), V)
run("int8 8193x8191: both odd", int8((8193 // d, 8191 // d)), (1, 0), V)
run("int8 (3, 4097, 4099) (0, 2, 1): both odd", int8((3, 4097 // d, 4099 // d)), (0, 2, 1), V)
run("int8 4097x1023: both odd, small", int8((4097 // d, 1023 // d)), (1, 0), V)
run("int8 (1001, 4096) (1, 0): x aligned, y odd, small", int8((1001 // d, 4096)), (1, 0), V)
