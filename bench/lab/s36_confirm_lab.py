"""Session 36, call 6: the committed dispatch (runs of 16-256 bytes walk the input, on the lean form where it fits)
against the forms it replaced: "rcout" (runs of up to 256 bytes in output order: session 35's lean copy for 128 and
256 bytes) and "rclean0" (RowCopy's forms: session 35's input order, 256 x 2, for 64 and 96 bytes). Cases and method
as bench/lab/s36_inlean_lab.py.

  python bench/lab/s36_confirm_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

jax, jnp, key, ON_GPU, run = base.jax, base.jnp, base.key, base.ON_GPU, base.run
d = 1 if ON_GPU else 16
print(f"device: {jax.devices()[0].device_kind}; {base.ROUNDS} rounds, rotated; best; % of the 1 GiB x * c", flush=True)
V = ["default", "rcout", "rclean0"]
P = (0, 2, 1, 3)
run("permute bf16 (32, 128, 64, 64) 128 B runs", jax.random.normal(key, (32, 128 // d, 64, 64), jnp.bfloat16), P, V)
run("permute f16 (8, 32, 2048, 64) 128 B runs", jax.random.normal(key, (8, 32, 2048 // d, 64), jnp.float16), P, V)
run("f32 (64, 512, 32, 16) 64 B runs", jax.random.normal(key, (64 // d, 512, 32, 16), jnp.float32), P, V)
run("f32 (64, 512, 16, 24) 96 B runs", jax.random.normal(key, (64 // d, 512, 16, 24), jnp.float32), P, V)
run("bf16 (16, 256, 32, 128) 256 B runs", jax.random.normal(key, (16 // d, 256, 32, 128), jnp.bfloat16), P, V)
