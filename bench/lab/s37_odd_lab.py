"""Session 37: transposes whose sides are not multiples of the 16-byte access. Session 36 (call 12) found int8
(3, 8200, 8200) (0, 2, 1) at 16.3% of copy, 578 us against jnp's 166 (0.29x): every ragged shape took the padded
element-access tiles (32x33 for 1- and 2-byte elements). Call 1 timed the swizzled tiles with each 16-byte slot split
in place into narrower accesses (8 / 4 bytes, or one element) and 64x65 padded tiles ("pad64" then). Call 2 (this
version): the default is NarrowAccessTile (8- or 4-byte accesses, contiguous per instruction) where those fit, 64x65
padded tiles for element accesses; "scalarodd" the padded tiles for every ragged shape; "scalarodd,pad32" the
dispatch before session 37 (32x33 padded tiles).
Method as bench/lab/s34_rowcopy_lab.py (CUPTI, best of 3 rotated rounds, % of the 1 GiB copy ceiling, outputs compared
with jnp's). The access width of each case is in its label.

  python bench/lab/s37_odd_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

jax, jnp, key, int8, run = base.jax, base.jnp, base.key, base.int8, base.run
d = 1 if base.ON_GPU else 32
base.banner()
V = ["default", "scalarodd", "scalarodd,pad32"]
E = ["default", "pad32"]  # element accesses: default and scalarodd are the same


def normal(shape, dtype):
    return jax.random.normal(key, tuple(max(1, s // d) if s > 64 else s for s in shape), dtype)


def i8(shape):
    return int8(tuple(max(1, s // d) if s > 64 else s for s in shape))


run("int8 (3, 8200, 8200) (0, 2, 1), 8-byte", i8((3, 8200, 8200)), (0, 2, 1), V)
run("int8 8200x8200, 8-byte", i8((8200, 8200)), (1, 0), V)
run("int8 8196x8196, 4-byte", i8((8196, 8196)), (1, 0), V)
run("int8 8193x8191, 1-byte", i8((8193, 8191)), (1, 0), E)
run("int8 4097x1023, 1-byte", i8((4097, 1023)), (1, 0), E)
run("int8 1000x1000, 8-byte", i8((1000, 1000)), (1, 0), V)
run("bf16 8196x8196, 8-byte", normal((8196, 8196), jnp.bfloat16), (1, 0), V)
run("bf16 8194x8194, 4-byte", normal((8194, 8194), jnp.bfloat16), (1, 0), V)
run("bf16 8193x8191, 2-byte", normal((8193, 8191), jnp.bfloat16), (1, 0), E)
run("bf16 (50257, 768) (1, 0), 2-byte", normal((50257, 768), jnp.bfloat16), (1, 0), E)
run("bf16 4098x1022, 4-byte", normal((4098, 1022), jnp.bfloat16), (1, 0), V)
run("int8 (8, 1000, 1000) (0, 2, 1), 8-byte", i8((8, 1000, 1000)), (0, 2, 1), V)
run("int8 (3, 8200, 8200) (0, 2, 1), 8-byte, again", i8((3, 8200, 8200)), (0, 2, 1), V)
run("f32 4097x1023 (the issue's case), 4-byte: unchanged", normal((4097, 1023), jnp.float32), (1, 0), ["default"])
