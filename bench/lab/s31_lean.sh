#!/usr/bin/env bash
# Session 31 (H200, one call): build; the long-row norm tests (cluster and hybrid tiers) with JK_NORM_LEAN=1, then
# bench/lab/s31_lean_lab.py (the kLean forms against the default and jnp). Logs under $OUT.
#   JK_TOTAL_S=560 bash bench/lab/s31_lean.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 560
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== lean tests ($(left)s left)"
JK_NORM_LEAN=1 timeout -k 5 $(( $(left) / 3 )) python3 -m pytest -q -p no:cacheprovider -o addopts= -x -n 8 \
  "$REPO/tests/test_softmax_long.py" -k "norm" >"$OUT/tests_lean.log" 2>&1
echo "tests rc=$?"; tail -3 "$OUT/tests_lean.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_lean.log" | head
echo "=== lab ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s31_lean_lab.py" --out "$OUT/s31_lean_lab.txt" \
  2>"$OUT/lab.err" | cut -c1-300
echo "lab rc=$?"; grep -E "Error|error" "$OUT/lab.err" | head -5
