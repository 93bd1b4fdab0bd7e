"""Session 35: the 16-byte row copy at 128 threads x 1 access with precomputed divisors (the new default) against
session 34's 256 x 2 with division instructions ("rc256x2"), the same shape's division instructions ("rcslow"), output
order for runs of up to 256 bytes ("rcout"), and the tiled row copy (the default for runs of 16, 32 and 128 bytes;
"norowtile" leaves it), all JK_TRANSPOSE_TIERS tokens re-read at every launch:
  - a plain copy (2, 2, n) float32 (1, 0, 2) at 67 / 134 MB moved (output order, runs of n / 4 elements);
  - 128-byte runs: the attention permute (32, 128, 64, 64) bfloat16 and (8, 32, 2048, 64) float16 (0, 2, 1, 3);
  - 32-byte runs (2048, 2048, 16) bfloat16 (1, 0, 2); 64-byte (64, 512, 32, 16) float32 (0, 2, 1, 3); 256-byte
    (16, 256, 32, 128) bfloat16 (0, 2, 1, 3).
As run in call 5, "rc256x2" set both orders to session 34's form and the default ran input order at 128 x 1 too; the
launcher after it keeps input order at 256 x 2 with divisions (token "rcin128" for the 128 x 1 form), so "rc256x2"
now touches output order only.
Method as bench/lab/s34_rowcopy_lab.py (the benchmark's CUPTI timer, median of 10 calls, outputs kept alive; XLA
command buffers off; 3 rounds rotated; best; outputs compared with jnp's, exact).

  python bench/lab/s35_rowcopy_lab.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s34_rowcopy_lab as base  # noqa: E402  (runs nothing at import: its cases are below a __main__ guard)

jax, jnp, key, ON_GPU, run = base.jax, base.jnp, base.key, base.ON_GPU, base.run
d = 1 if ON_GPU else 16
print(f"device: {jax.devices()[0].device_kind}; {base.ROUNDS} rounds, rotated; best; % of the 1 GiB x * c", flush=True)
for mb in ((32 * 128 * 64 * 64 * 2, 8192 * 8192) if ON_GPU else (4096,)):
    n = mb // 4
    run(f"row copy float32 (2, 2, {n // 4}) (1, 0, 2)", jax.random.normal(key, (2, 2, n // 4), jnp.float32), (1, 0, 2),
        ["default", "rcslow", "rc256x2"])
ROWS = ["default", "norowtile", "norowtile,rcout", "norowtile,rcslow", "norowtile,rc256x2", "norowtile,rc256x2,rcout"]
run("permute bf16 (32, 128, 64, 64) (0, 2, 1, 3)", jax.random.normal(key, (32, 128 // d, 64, 64), jnp.bfloat16),
    (0, 2, 1, 3), ROWS)
run("permute f16 (8, 32, 2048, 64) (0, 2, 1, 3)", jax.random.normal(key, (8, 32, 2048 // d, 64), jnp.float16),
    (0, 2, 1, 3), ROWS)
run("32 B runs bf16 (2048, 2048, 16) (1, 0, 2)", jax.random.normal(key, (2048 // d, 2048, 16), jnp.bfloat16),
    (1, 0, 2), ROWS)
run("64 B runs f32 (64, 512, 32, 16) (0, 2, 1, 3)", jax.random.normal(key, (64 // d, 512, 32, 16), jnp.float32),
    (0, 2, 1, 3), ["default", "rcout", "rc256x2", "rc256x2,rcout"])
run("256 B runs bf16 (16, 256, 32, 128) (0, 2, 1, 3)", jax.random.normal(key, (16 // d, 256, 32, 128), jnp.bfloat16),
    (0, 2, 1, 3), ["default", "rcout", "rc256x2", "rc256x2,rcout"])
