#!/usr/bin/env bash
# Session 35, call 17 (H200, the last device time): build; the model, bench and reliability test files (the GPT
# pipeline's head transposes now take the lean row copy).
#   bash bench/lab/s35_call17.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 200
export XLA_PYTHON_CLIENT_PREALLOCATE=false
timeout -k 5 $(( $(left) - 3 )) python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_model.py" \
  "$REPO/tests/test_reliability.py" "$REPO/tests/test_bench.py" >"$OUT/tests_s35_17.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_s35_17.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_s35_17.log" | head
