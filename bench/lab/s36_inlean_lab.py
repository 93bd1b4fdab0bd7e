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

jax, jnp, key = base.jax, base.jnp, base.key
d = 1 if base.ON_GPU else 16
P = (0, 2, 1, 3)
# (label, shape, dtype): every case permutes (0, 2, 1, 3); s36_confirm_lab.py times the first five again.
CASES = [("permute bf16 (32, 128, 64, 64) 128 B runs", (32, 128 // d, 64, 64), jnp.bfloat16),
         ("permute f16 (8, 32, 2048, 64) 128 B runs", (8, 32, 2048 // d, 64), jnp.float16),
         ("f32 (64, 512, 32, 16) 64 B runs", (64 // d, 512, 32, 16), jnp.float32),
         ("f32 (64, 512, 16, 24) 96 B runs", (64 // d, 512, 16, 24), jnp.float32),
         ("bf16 (16, 256, 32, 128) 256 B runs", (16 // d, 256, 32, 128), jnp.bfloat16),
         ("bf16 (64, 512, 64, 16) 32 B runs", (64 // d, 512, 64, 16), jnp.bfloat16)]


def main(cases, variants, extra=None):
    """Each case under `variants` (and the settings extra[label] adds)."""
    base.banner()
    for label, shape, dt in cases:
        base.run(label, jax.random.normal(key, shape, dt), P, variants + (extra or {}).get(label, []))


if __name__ == "__main__":
    main(CASES, ["default", "rcinlean"], {CASES[5][0]: ["norowtile,rcinlean"]})
