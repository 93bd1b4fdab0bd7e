"""Session 38, call 2: "grid3" (compact tiles on a 3-D grid; call 1: float32 2048x512 2.34 -> 2.24 us, int8 1.66 ->
1.55, float32 4096x1024 7.07 -> 6.35, int8 (3, 8200, 8200) (0, 2, 1) 137.0 -> 139.9) against the default on every
benchmark transpose that runs a compact tile and on compact cases of 8-67 MB (single- and multi-wave, 2-D, batched,
ragged, padded), to choose where it becomes the default; and the register-block tier's CTA shape with it (float32
2048x512: "rb256", "rbl2" / "rbl8" lanes along A). Method as s38_lab.py.
  python bench/lab/s38_lab2.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

int8, bf16, f32, run = base.int8, base.bf16, base.f32, base.run
d = 1 if base.ON_GPU else 32
G = ["default", "grid3"]
base.banner()
base.ROUNDS = 5 if base.ON_GPU else 1
run("float32 2048x512", f32((2048, 512)), (1, 0), G + ["rb256,grid3", "rbl2,grid3", "rbl8,grid3"])
run("int8 2048x512", int8((2048, 512)), (1, 0), G)
run("bfloat16 2048x512", bf16((2048, 512)), (1, 0), G)
run("float32 (8, 16, 32, 64, 2) (4, 0, 3, 1, 2)", f32((8, 16, 32, 64, 2)), (4, 0, 3, 1, 2), G)
run("float32 4097x1023 (padded)", f32((4097 // d, 1023)), (1, 0), G)
run("int8 4097x1023 (padded, word loads)", int8((4097 // d, 1023)), (1, 0), G)
run("bfloat16 4098x1022 (padded)", bf16((4098 // d, 1022)), (1, 0), G)
run("bfloat16 (16, 512, 512) (0, 2, 1)", bf16((16, 512 // d, 512)), (0, 2, 1), G)
base.ROUNDS = 3 if base.ON_GPU else 1
run("float32 4096x1024", f32((4096 // d, 1024)), (1, 0), G)
run("float32 2048x2048", f32((2048 // d, 2048)), (1, 0), G)
run("bfloat16 4096x2048", bf16((4096 // d, 2048)), (1, 0), G)
run("int8 4096x4096", int8((4096 // d, 4096)), (1, 0), G)
run("int8 16384x4096", int8((16384 // d, 4096)), (1, 0), G)
run("int8 8192^2", int8((8192 // d, 8192)), (1, 0), G)
run("int8 8200^2 (8-byte)", int8((8200 // d, 8200)), (1, 0), G)
run("int8 (3, 8200, 8200) (0, 2, 1) (8-byte)", int8((3, 8200 // d, 8200)), (0, 2, 1), G)
run("int8 (3, 4104, 4104) (0, 2, 1) (8-byte)", int8((3, 4104 // d, 4104)), (0, 2, 1), G)
