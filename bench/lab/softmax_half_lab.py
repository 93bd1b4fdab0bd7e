"""Issue 4, 16-bit rows: the softmax / log_softmax dispatch vs jnp, and the block-tier layouts A/B (GPU).

Main process: the default dispatch and jnp (jax_kernels.reference) back to back per case, CUPTI kernel time
(jax.experimental.mosaic.gpu.profiler.measure), median over N calls (N <= 20, bounded by the output size:
the profiler keeps every output alive). Bytes = input read once + output written once; % of the 4299 GB/s
H200 copy ceiling (bench/results/h200). Every case is checked against float64 NumPy on sample rows.
Then one subprocess per tier knob (read once per process, so a process per setting) times ours only on
the cases the knob changes:
  old       JK_SOFTMAX_HALF_BLOCK=floats16   the layout before issue 4's fix (16 float elements per thread)
  floats32  JK_SOFTMAX_HALF_BLOCK=floats32   32 elements per thread widened to float
  packed32  JK_SOFTMAX_HALF_BLOCK=packed32   32 elements per thread kept packed (the default: a control
                                             for the spread between processes)
  bulk      JK_SOFTMAX_HALF_BLOCK=bulk       packed32 fed by bulk copies into shared memory (persistent CTAs)
  short1/4  JK_SOFTMAX_SHORT_ROWS=1/4        rows per lane of the warp tier for 16-bit rows <= 256 columns
                                             (default 2; 4 is the setting before issue 4's fix)
Rows 49152; cases under 100 MB are partly L2-warm (marked L2).

  python bench/lab/softmax_half_lab.py [--json OUT.jsonl] [--variants old floats32 ...] [--cols ...]
"""
from __future__ import annotations

import math

from softmax_lab_common import main as lab_main

COLS = [32, 128, 1024, 2048, 4096, 8192, 16384]
HALF = ["bfloat16", "float16"]
VARIANTS = {  # name: (env, cols, dtypes)
    "old": ({"JK_SOFTMAX_HALF_BLOCK": "floats16"}, [2048, 4096, 8192, 16384], HALF),
    "floats32": ({"JK_SOFTMAX_HALF_BLOCK": "floats32"}, [2048, 4096, 8192, 16384], HALF),
    "packed32": ({"JK_SOFTMAX_HALF_BLOCK": "packed32"}, [2048, 4096, 8192, 16384], HALF),
    "bulk": ({"JK_SOFTMAX_HALF_BLOCK": "bulk"}, [2048, 4096, 8192, 16384], HALF),
    "short1": ({"JK_SOFTMAX_SHORT_ROWS": "1"}, [32, 128], HALF),
    "short4": ({"JK_SOFTMAX_SHORT_ROWS": "4"}, [32, 128], HALF),
}


def report(res, var):
    olds = [(r, var[k]) for r in res if (k := ("old", r["op"], r["dtype"], r["cols"])) in var]
    if olds:
        g = math.exp(sum(math.log(o["ours_ms"] / r["ours_ms"]) for r, o in olds) / len(olds))
        print(f"new vs old layout (same cases, across processes): geomean speed-up {g:.3f}x "
              f"over {len(olds)} cases")


def main():
    lab_main(__file__, "softmax_half_lab", VARIANTS, COLS, report=report)


if __name__ == "__main__":
    main()
