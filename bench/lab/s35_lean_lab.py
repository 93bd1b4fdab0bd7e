"""Session 35, call 15: the lean output-order row copy (kRowCopyLean: one access a thread, one pass, at most 4 row
axes, only the input offset) against RowCopy's 128 x 1 form with divisors ("rclean0") and session 34's 256 x 2
("rc256x2"): a plain copy at 67 / 134 MB moved; the attention permutes in output order ("norowtile,rcout") against
their tiled default and input order ("norowtile"); 64- and 256-byte runs in output order ("rcout") against their
input-order default. Method as bench/lab/s34_rowcopy_lab.py (CUPTI, best of 3 rotated rounds, % of the 1 GiB copy
ceiling, outputs compared with jnp's).

  python bench/lab/s35_lean_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

jax, jnp, key, ON_GPU, run = base.jax, base.jnp, base.key, base.ON_GPU, base.run
d = 1 if ON_GPU else 16
print(f"device: {jax.devices()[0].device_kind}; {base.ROUNDS} rounds, rotated; best; % of the 1 GiB x * c", flush=True)
for mb in ((32 * 128 * 64 * 64 * 2, 8192 * 8192) if ON_GPU else (4096,)):
    n = mb // 4
    run(f"row copy float32 (2, 2, {n // 4}) (1, 0, 2)", jax.random.normal(key, (2, 2, n // 4), jnp.float32), (1, 0, 2),
        ["default", "rclean0", "rc256x2"])
PERM = ["default", "norowtile", "norowtile,rcout", "norowtile,rcout,rclean0"]
run("permute bf16 (32, 128, 64, 64) (0, 2, 1, 3)", jax.random.normal(key, (32, 128 // d, 64, 64), jnp.bfloat16),
    (0, 2, 1, 3), PERM)
run("permute f16 (8, 32, 2048, 64) (0, 2, 1, 3)", jax.random.normal(key, (8, 32, 2048 // d, 64), jnp.float16),
    (0, 2, 1, 3), PERM)
run("64 B runs f32 (64, 512, 32, 16) (0, 2, 1, 3)", jax.random.normal(key, (64 // d, 512, 32, 16), jnp.float32),
    (0, 2, 1, 3), ["default", "rcout", "rcout,rclean0"])
run("256 B runs bf16 (16, 256, 32, 128) (0, 2, 1, 3)", jax.random.normal(key, (16 // d, 256, 32, 128), jnp.bfloat16),
    (0, 2, 1, 3), ["default", "rcout", "rcout,rclean0"])
