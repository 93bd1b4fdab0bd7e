"""Session 35, call 12 (its lab tokens were removed after it: none won): the input-order 16-byte row copy's CTA
shape (lab tokens rcin512x2 / rcin512x4 / rcin1024x2 / rcin1024x1 / rcin256x4 against the default 256 x 2) on the attention permute, where it runs with "norowtile" (the
default is the tiled row copy), and on 64- and 256-byte runs, where it is the default. Method as
bench/lab/s34_rowcopy_lab.py (CUPTI, best of 3 rotated rounds, % of the 1 GiB copy ceiling).

  python bench/lab/s35_rowin_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402

jax, jnp, key, ON_GPU, run = base.jax, base.jnp, base.key, base.ON_GPU, base.run
d = 1 if ON_GPU else 16
SHAPES = ["rcin512x2", "rcin512x4", "rcin1024x2", "rcin1024x1", "rcin256x4"]
print(f"device: {jax.devices()[0].device_kind}; {base.ROUNDS} rounds, rotated; best; % of the 1 GiB x * c", flush=True)
run("permute bf16 (32, 128, 64, 64) (0, 2, 1, 3)", jax.random.normal(key, (32, 128 // d, 64, 64), jnp.bfloat16),
    (0, 2, 1, 3), ["default", "norowtile"] + [f"norowtile,{s}" for s in SHAPES])
run("permute f16 (8, 32, 2048, 64) (0, 2, 1, 3)", jax.random.normal(key, (8, 32, 2048 // d, 64), jnp.float16),
    (0, 2, 1, 3), ["default", "norowtile"] + [f"norowtile,{s}" for s in SHAPES])
run("64 B runs f32 (64, 512, 32, 16) (0, 2, 1, 3)", jax.random.normal(key, (64 // d, 512, 32, 16), jnp.float32),
    (0, 2, 1, 3), ["default"] + SHAPES)
run("256 B runs bf16 (16, 256, 32, 128) (0, 2, 1, 3)", jax.random.normal(key, (16 // d, 256, 32, 128), jnp.bfloat16),
    (0, 2, 1, 3), ["default"] + SHAPES)
