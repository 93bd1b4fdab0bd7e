"""Session 36: the lean row copy (kRowCopyLean: one 16-byte access a thread, one pass, precomputed divisors) walking the
input ("rcinlean": x read in order, y written as scattered runs) against each run length's default: 64- and 96-byte
runs (input order on RowCopy's 256 x 2 form with division instructions), 128- and 256-byte runs and the attention
permutes (the lean copy in output order), 32-byte runs (the tiled row copy; "norowtile,rcinlean" skips it). The lean
form gained 1-3 points of copy in output order over RowCopy's general form (session 35); input order never had it.
Method as bench/lab/s34_rowcopy_lab.py (CUPTI, best of 3 rotated rounds, % of the 1 GiB copy ceiling, outputs
compared with jnp's).

  python bench/lab/s36_inlean_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

jax, jnp, key, ON_GPU, run = base.jax, base.jnp, base.key, base.ON_GPU, base.run
d = 1 if ON_GPU else 16
print(f"device: {jax.devices()[0].device_kind}; {base.ROUNDS} rounds, rotated; best; % of the 1 GiB x * c", flush=True)
V = ["default", "rcinlean"]
P = (0, 2, 1, 3)
run("permute bf16 (32, 128, 64, 64) 128 B runs", jax.random.normal(key, (32, 128 // d, 64, 64), jnp.bfloat16), P, V)
run("permute f16 (8, 32, 2048, 64) 128 B runs", jax.random.normal(key, (8, 32, 2048 // d, 64), jnp.float16), P, V)
run("f32 (64, 512, 32, 16) 64 B runs", jax.random.normal(key, (64 // d, 512, 32, 16), jnp.float32), P, V)
run("f32 (64, 512, 16, 24) 96 B runs", jax.random.normal(key, (64 // d, 512, 16, 24), jnp.float32), P, V)
run("bf16 (16, 256, 32, 128) 256 B runs", jax.random.normal(key, (16 // d, 256, 32, 128), jnp.bfloat16), P, V)
run("bf16 (64, 512, 64, 16) 32 B runs", jax.random.normal(key, (64 // d, 512, 64, 16), jnp.bfloat16), P,
    V + ["norowtile,rcinlean"])
