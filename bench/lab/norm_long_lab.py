"""LayerNorm / RMSNorm long rows: the ring tier (JK_NORM_LONG) against the default dispatch and jnp on the GPU.
The machinery is softmax_long_lab.py's (one design for both ops); this runs its norm cases only.

  python bench/lab/norm_long_lab.py [--quick] [--log FILE]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from softmax_long_lab import main  # noqa: E402

if __name__ == "__main__":
    sys.argv.insert(1, "--only-norms")
    sys.exit(main())
