"""Session 36 (prepared for the next session's first device call; not run yet): transposes whose sides are not
multiples of the 16-byte access, where the launcher falls back to element accesses (kTiledScalarPadded: 32x33 tiles
for 1- and 2-byte elements, 64x65 for 4 and 8). Call 12 found int8 (3, 8200, 8200) (0, 2, 1) at 16.3% of copy, 578 us
against jnp's 166 (0.29x). Settings: the default, "pad64" (1- and 2-byte elements on 64x65 tiles, 16 rows a thread).
Method as bench/lab/s34_rowcopy_lab.py (CUPTI, best of 3 rotated rounds, % of the 1 GiB copy ceiling, outputs compared
with jnp's).

  python bench/lab/s36_odd_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

jax, jnp, key, int8, run = base.jax, base.jnp, base.key, base.int8, base.run
d = 1 if base.ON_GPU else 32
base.banner()
V = ["default", "pad64"]
run("int8 (3, 8200, 8200) (0, 2, 1)", int8((3, 8200 // d, 8200 // d)), (0, 2, 1), V)
run("int8 8200x8200 (1, 0)", int8((8200 // d, 8200 // d)), (1, 0), V)
run("int8 4097x1023 (1, 0)", int8((4097 // d, 1023 // d)), (1, 0), V)
run("int8 1000x1000 (1, 0)", int8((1000, 1000)), (1, 0), V)
run("bf16 8200x8200 (1, 0)", jax.random.normal(key, (8200 // d, 8200 // d), jnp.bfloat16), (1, 0), V)
run("bf16 4097x1023 (1, 0)", jax.random.normal(key, (4097 // d, 1023 // d), jnp.bfloat16), (1, 0), V)
run("f32 4097x1023 (1, 0) (the issue's case)", jax.random.normal(key, (4097 // d, 1023 // d), jnp.float32), (1, 0),
    ["default"])
