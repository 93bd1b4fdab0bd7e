"""Session 37 (call 3): the padded element-access tiles of 1- and 2-byte ragged transposes (sides not multiples of 4
bytes), 64 x 64 elements with one 4-byte word of padding a row (the default: 64x68 bytes, 64x66 halves), against one
element ("pad1", 64x65: lanes tx and tx + 2 share a bank) and the 32x33 tiles before session 37 ("pad32"). Method as
bench/lab/s34_rowcopy_lab.py (CUPTI, best of 3 rotated rounds, % of the 1 GiB copy ceiling, outputs compared with
jnp's).

  python bench/lab/s37_pad_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

jax, jnp, key, int8, run = base.jax, base.jnp, base.key, base.int8, base.run
d = 1 if base.ON_GPU else 32
base.banner()
V = ["default", "pad1", "pad32"]
run("int8 8193x8191", int8((8193 // d, 8191 // d)), (1, 0), V)
run("int8 4097x1023", int8((4097 // d, 1023 // d)), (1, 0), V)
run("int8 (3, 4097, 4099) (0, 2, 1)", int8((3, 4097 // d, 4099 // d)), (0, 2, 1), V)
run("bf16 8193x8191", jax.random.normal(key, (8193 // d, 8191 // d), jnp.bfloat16), (1, 0), V)
run("bf16 (50257, 768)", jax.random.normal(key, (50257 // d, 768 // d + 1), jnp.bfloat16), (1, 0), V)
run("bf16 4097x1023", jax.random.normal(key, (4097 // d, 1023 // d), jnp.bfloat16), (1, 0), V)
