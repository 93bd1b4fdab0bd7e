#!/usr/bin/env bash
# Session 32, call 6 (H200): build; tests/test_transpose.py -k row_copy (the tensor-map row copy under its lab tokens);
# the lab of the row copies as tensor-map boxes (bench/lab/s32_rowtma_lab.py); then the sanitizer's long-row part on
# the final norm defaults (its own debug build). Logs under $OUT.
#   bash bench/lab/s32_call6.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== row copy tests ($(left)s left)"
timeout -k 5 100 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 8 "$REPO/tests/test_transpose.py" \
  -k "row_copy" >"$OUT/tests_rowcopy.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_rowcopy.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_rowcopy.log" | head
echo "=== lab ($(left)s left)"
timeout -k 5 120 python3 "$REPO/bench/lab/s32_rowtma_lab.py" --out "$OUT/s32_rowtma_lab.txt" 2>&1 | tail -7
echo "=== sanitizer ($(left)s left)"
cd "$REPO" && JK_SANITIZE_TIMEOUT=$(( $(left) - 60 )) JK_SANITIZE_PARTS=long_rows \
  JK_SANITIZE_TOOLS="memcheck racecheck synccheck" JK_SANITIZE_LOGS=$OUT/san bash bench/sanitize.sh 2>&1 | tail -8
