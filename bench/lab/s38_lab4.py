"""Session 38, call 6: float32 2048x512 (0.943-0.956x jnp on the grid of tiles) on the register blocks with 2 or 4 warps
side by side along A ("rbwa2" / "rbwa4": a block of 32 x 64 or 64 x 32 elements, not 16 x 128) and on the swizzled
32x32 tile of 128 threads ("s2": session 2's small tier, now on the grid of tiles too), against the default. Method as
s38_lab.py, 7 rotated rounds. Every form tied at 2.21-2.24 us (bench/lab/s38_labs_h200.txt); the rbwa tokens were
removed after call 6, so on later builds this script times the default under their names.
  python bench/lab/s38_lab4.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

f32, run = base.f32, base.run
base.banner()
base.ROUNDS = 7 if base.ON_GPU else 1
run("float32 2048x512", f32((2048, 512)), (1, 0), ["default", "rbwa2", "rbwa4", "s2"])
run("float32 (8, 16, 32, 64, 2) (4, 0, 3, 1, 2)", f32((8, 16, 32, 64, 2)), (4, 0, 3, 1, 2), ["default", "rbwa2"])
run("float32 2048x512 again", f32((2048, 512)), (1, 0), ["default", "rbwa2", "rbwa4"])
