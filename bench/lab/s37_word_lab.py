"""Session 37 (call 9): ragged 1- and 2-byte transposes whose x rows are odd, on the padded tiles: x's rows loaded as
the aligned 4-byte words that cover them, each row's misalignment shifted out in registers (kWordIn / kWordInVecOut;
the default) against element loads ("padword0", call 7's default). Method as bench/lab/s34_rowcopy_lab.py (CUPTI, best
of 3 rotated rounds, % of the 1 GiB copy ceiling, outputs compared with jnp's).

  python bench/lab/s37_word_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

int8, bf16, run = base.int8, base.bf16, base.run
d = 1 if base.ON_GPU else 32
base.banner()
V = ["default", "padword0"]


run("bf16 (768, 50257) (1, 0): x odd, y aligned", bf16((768, 50257 // d)), (1, 0), V)
run("int8 (8192, 8193) (1, 0): x odd, y aligned", int8((8192, 8193 // d)), (1, 0), V)
run("int8 8193x8191: both odd", int8((8193 // d, 8191 // d)), (1, 0), V)
run("bf16 8193x8191: both odd", bf16((8193 // d, 8191 // d)), (1, 0), V)
run("int8 (3, 4097, 4099) (0, 2, 1): both odd", int8((3, 4097 // d, 4099 // d)), (0, 2, 1), V)
run("int8 4097x1023: both odd, small", int8((4097 // d, 1023 // d)), (1, 0), V)
run("bf16 4097x1023: both odd, small", bf16((4097 // d, 1023 // d)), (1, 0), V)
run("bf16 (1024, 4097) (1, 0): x odd, y aligned, small", bf16((1024, 4097 // d)), (1, 0), V)
run("bf16 (50257, 768) (1, 0): x aligned (unchanged)", bf16((50257 // d, 768)), (1, 0), ["default"])
