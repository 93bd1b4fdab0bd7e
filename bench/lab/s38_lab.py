"""Session 38: lab tokens on the compact tiles against the default, for issue 5's misses.
  - "grid3": the compact swizzled and register-block tiles on a 3-D grid (tile coordinates without the two 32-bit
    divisions that stand between a block's start and its first load); 2048x512 float32 / int8 trail jnp by 0.1-0.2 us.
  - "rb32" / "rb64" / "rb256": register-block CTAs (the float32 small tier) of 32 / 64 / 256 threads, not 128: 512
    CTAs of 128 threads put 3 or 4 on each of 132 SMs; XLA's kernel runs 4096 one-warp CTAs (31-32 an SM).
  - "stcs" / "ldcs" / "cs": streaming stores / loads / both (st.global.cs, ld.global.cs) on the compact B-fastest big
    tiles: int8 8192^2 sits at 88.6-89.8% of copy.
Method as bench/lab/s34_rowcopy_lab.py (CUPTI, median of 10 calls; best of rotated rounds, 5 for the small cases, 3
for the large; % of the 1 GiB copy ceiling; outputs compared with jnp's).
  python bench/lab/s38_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

int8, bf16, f32, run = base.int8, base.bf16, base.f32, base.run
d = 1 if base.ON_GPU else 32
base.banner()
base.ROUNDS = 5 if base.ON_GPU else 1
SMALL = ["default", "grid3", "rb32", "rb64", "rb256", "rb32,grid3", "rb64,grid3"]
run("float32 2048x512", f32((2048, 512)), (1, 0), SMALL)
run("int8 2048x512", int8((2048, 512)), (1, 0), ["default", "grid3"])
run("bfloat16 2048x512", bf16((2048, 512)), (1, 0), ["default", "grid3"])
run("float32 (8, 16, 32, 64, 2) (4, 0, 3, 1, 2)", f32((8, 16, 32, 64, 2)), (4, 0, 3, 1, 2),
    ["default", "grid3", "rb64", "rb64,grid3"])
run("float32 4096x1024", f32((4096, 1024)), (1, 0), ["default", "grid3"])
base.ROUNDS = 3 if base.ON_GPU else 1
run("int8 8192^2", int8((8192 // d, 8192 // d)), (1, 0), ["default", "grid3", "stcs", "ldcs", "cs"])
run("int8 (3, 8200, 8200) (0, 2, 1)", int8((3, 8200 // d, 8200 // d)), (0, 2, 1), ["default", "grid3"])
run("float32 (64, 1024, 1024) (0, 2, 1)", f32((64 // (d // 8 or 1), 1024 // d, 1024)), (0, 2, 1),
    ["default", "grid3"])
