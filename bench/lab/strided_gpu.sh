#!/usr/bin/env bash
# One device call for the non-last-axis column-tile tiers: build (sm_90a), bench/lab/strided_lab.py (every
# tile configuration, the scalar two-read kernels and jnp in one process), then the tiers' tests
# (tests/test_norm_strided.py, tests/test_softmax_columns.py: every configuration forced, and the default).
#   cd .dev/s4strided && bash bench/lab/strided_gpu.sh      (JK_TOTAL_S: the seconds to stay within, 285)
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
mkdir -p "$OUT"
T0=$(date +%s)
TOTAL=${JK_TOTAL_S:-285}
left() { echo $(( TOTAL - ($(date +%s) - T0) )); }
export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
OUT=$OUT bash "$REPO/bench/gpu_check.sh" build || exit 1
cd /tmp  # the installed package, not the source tree
l=$(left)
echo "=== lab (${l}s left)"
timeout -k 5 $(( l - 70 )) python3 "$REPO/bench/lab/strided_lab.py" --budget $(( l - 95 )) \
  --out "$OUT/strided_lab.txt" >"$OUT/lab.log" 2>&1
echo "lab rc=$?"
grep -vE "^(WARNING|I0000|W0000|E0000)" "$OUT/lab.log" | grep -v "^$" | cut -c1-330
l=$(left)
echo "=== tests (${l}s left)"
timeout -k 5 $(( l - 3 )) python3 -m pytest -q -n 8 --maxfail=30 -p no:cacheprovider -o addopts= \
  "$REPO/tests/test_norm_strided.py" "$REPO/tests/test_softmax_columns.py" >"$OUT/tests.log" 2>&1
echo "tests rc=$?"
grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | cut -c1-200 | head -20
tail -n 3 "$OUT/tests.log"
