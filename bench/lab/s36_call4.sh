#!/usr/bin/env bash
# Session 36, call 4 (H200, call 3's build when the machine is still warm): bench/lab/s36_shape_lab.py.
#   bash bench/lab/s36_call4.sh
. "$(dirname "$0")/norm_gpu_common.sh"
(cd /tmp && python3 -c "import jax_kernels" 2>/dev/null) || JK_NO_BUILD=0
JK_NO_BUILD=${JK_NO_BUILD:-1} norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== shape lab ($(left)s left)"
timeout -k 5 300 python3 "$REPO/bench/lab/s36_shape_lab.py" >"$OUT/shape_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/shape_lab.log" | cut -c1-200 | tail -40
