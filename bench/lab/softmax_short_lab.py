"""Issue: softmax / log_softmax short rows (<= 1024 columns, the warp tier) and float32 block rows vs jnp (GPU).

Main process: the default dispatch and jnp (jax_kernels.reference) back to back per case, CUPTI kernel time
(jax.experimental.mosaic.gpu.profiler.measure), median over N calls (N <= 20, bounded by the output size).
Bytes = input read once + output written once; % of the 4299 GB/s H200 copy ceiling (bench/results/h200).
Every case is checked against float64 NumPy on sample rows. Then one subprocess per tier knob (read once per
process) times ours only on the cases the knob changes, against the main process's jnp times:
  pp1r1     JK_SOFTMAX_SHORT_ROWS=1                    one pack per lane, 1 row per lane (16-bit)
  pp1r4     JK_SOFTMAX_SHORT_ROWS=4                    one pack per lane, 4 rows per lane (16-bit)
  pp2r1     JK_SOFTMAX_LANE_PACKS=2                    two 16-byte packs per lane, 1 row per lane
  pp2r2     JK_SOFTMAX_LANE_PACKS=2 LANE_ROWS=2        two packs per lane, 2 rows per lane
  pp4r1     JK_SOFTMAX_LANE_PACKS=4                    four packs per lane, 1 row per lane
  f32e32    JK_SOFTMAX_F32_ELEMS=32                    float32 block tier at 32 elements per thread
  wide      JK_SOFTMAX_HALF_WIDE=1                     16-bit rows of 16384 < n <= 32768: 64 packed elements
                                                       per thread, one read (instead of two passes)
Rows 49152; 512/1024 columns and 32768 16-bit: the default only (checks that nothing regressed); cases under 100 MB are partly L2-warm (marked L2).

  python bench/lab/softmax_short_lab.py [--json OUT.jsonl] [--variants ...] [--cols ...] [--budget S]
"""
from __future__ import annotations

from softmax_lab_common import main as lab_main

COLS = [32, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768]
F32_ONLY = {2048, 4096, 8192, 16384}  # the variants there: float32 only
HALF_ONLY = {32768}
ALL = ["bfloat16", "float16", "float32"]
HALF = ["bfloat16", "float16"]
VARIANTS = {  # name: (env, cols, dtypes); the most wanted first (a budget cuts the tail)
    "pp2r1": ({"JK_SOFTMAX_LANE_PACKS": "2"}, [32, 128, 512], ALL),
    "pp4r1": ({"JK_SOFTMAX_LANE_PACKS": "4"}, [32, 128, 512], ALL),
    "pp2r2": ({"JK_SOFTMAX_LANE_PACKS": "2", "JK_SOFTMAX_LANE_ROWS": "2"}, [32, 128, 512], ALL),
    "f32e32": ({"JK_SOFTMAX_F32_ELEMS": "32"}, [2048, 4096, 8192, 16384], ["float32"]),
    "wide": ({"JK_SOFTMAX_HALF_WIDE": "1"}, [32768], HALF),
    "pp1r1": ({"JK_SOFTMAX_SHORT_ROWS": "1"}, [32, 128], HALF),
    "pp1r4": ({"JK_SOFTMAX_SHORT_ROWS": "4"}, [32, 128], HALF),
}


def skip(tag, cols, dname):
    """The default run leaves out the 16-bit cases of the float32-only columns and float32 at 32768."""
    return tag == "new" and ((cols in F32_ONLY and dname != "float32") or
                             (cols in HALF_ONLY and dname == "float32"))


def main():
    lab_main(__file__, "softmax_short_lab", VARIANTS, COLS, skip=skip)


if __name__ == "__main__":
    main()
