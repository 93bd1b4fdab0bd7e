#!/usr/bin/env bash
# Session 20, device calls 3-5, 7 and 11 (H200): build (sm_90a); the tests of FILES matching -k FILTER, then LAB with
# S20_LAB=CASES (one of s20_pitch_lab.py's / s20_linear_lab.py's case lists).
#   bash bench/lab/s20_pairs.sh LAB CASES FILTER [FILES...]
#   call 3: s20_pitch_lab.py mcb "mcb or (wgmma and default)" tests/test_matmul.py
#   call 4: s20_pitch_lab.py rule "mcb or (wgmma and default)" tests/test_matmul.py
#   call 5: s20_pitch_lab.py small "mcb or mca or mc1 or (wgmma and default)" tests/test_matmul.py
#   call 7: s20_linear_lab.py "" "mcb or default or pingpong" tests/test_linear_epilogue.py tests/test_matmul.py
#   call 11: s20_linear_lab.py fold "linear" tests/test_linear_epilogue.py tests/test_matmul.py
. "$(dirname "$0")/norm_gpu_common.sh"
lab=$1 cases=$2 filter=$3
shift 3
files=$(for f in "${@:-tests/test_matmul.py}"; do echo "$REPO/$f"; done)
norm_gpu_start ${JK_TOTAL_S:-580}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
# shellcheck disable=SC2086  # files is a list of paths
timeout -k 5 200 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= $files -k "$filter" >"$OUT/tests_pairs.log" 2>&1
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_pairs.log" | tail -15 | cut -c1-300
l=$(left)
echo "=== $lab ($l s left)"
S20_LAB=$cases XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/$lab" \
  2>&1 | tee "$OUT/lab.log" | grep -E "^\||device|FAILED|Error" | head -80
