"""Session 37 (calls 6-7): ragged 1- and 2-byte transposes on the padded tiles whose one side is 16-byte aligned, that side
in 16-byte vectors (PaddedTileBody's kVecSide; the default) against element accesses on both sides ("padvec0", call 3's
default). Method as bench/lab/s34_rowcopy_lab.py (CUPTI, best of 3 rotated rounds, % of the 1 GiB copy ceiling, outputs
compared with jnp's).

  python bench/lab/s37_vecside_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

int8, bf16, run = base.int8, base.bf16, base.run
d = 1 if base.ON_GPU else 32
base.banner()
V = ["default", "padvec0"]


run("bf16 (50257, 768) (1, 0): x's rows aligned", bf16((50257 // d, 768)), (1, 0), V)
run("bf16 (768, 50257) (1, 0): y's rows aligned", bf16((768, 50257 // d)), (1, 0), V)
run("bf16 (8, 4097, 1024) (0, 2, 1): x's rows aligned", bf16((8, 4097 // d, 1024)), (0, 2, 1), V)
run("int8 (8193, 8192) (1, 0): x's rows aligned", int8((8193 // d, 8192)), (1, 0), V)
run("int8 (8192, 8193) (1, 0): y's rows aligned", int8((8192, 8193 // d)), (1, 0), V)
run("int8 (1001, 4096) (1, 0): x's rows aligned, small", int8((1001 // d, 4096)), (1, 0), V)
run("bf16 (4097, 1024) (1, 0): x's rows aligned, small", bf16((4097 // d, 1024)), (1, 0), V)
run("int8 8193x8191 (both odd: unchanged)", int8((8193 // d, 8191 // d)), (1, 0), ["default"])
