#!/usr/bin/env bash
# Session 31, call 11 (H200): build; the long-row norm tests with the lab forms forced (JK_NORM_FULL=1: 16-bit
# LayerNorm's kFull form; JK_NORM_HYBRID=3: float32 RMSNorm's hybrid at 7 + 9 packs), then s31_lean_lab.py --more
# --variants def,full,h3,jnp. Logs under $OUT.
#   JK_TOTAL_S=420 bash bench/lab/s31_call11.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 420
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
JK_NORM_FULL=1 timeout -k 5 100 python3 -m pytest -q -p no:cacheprovider -o addopts= -x -n 16 \
  "$REPO/tests/test_softmax_long.py" -k "norm_cluster_rows or norm_knob_rows or lean_large or layer_norm_long" \
  >"$OUT/tests_full.log" 2>&1
echo "full tests rc=$?"; tail -1 "$OUT/tests_full.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_full.log" | head -5
JK_NORM_HYBRID=3 timeout -k 5 100 python3 -m pytest -q -p no:cacheprovider -o addopts= -x -n 16 \
  "$REPO/tests/test_softmax_long.py" -k "rms_norm_long or hybrid_large or lean_large" >"$OUT/tests_h3.log" 2>&1
echo "h3 tests rc=$?"; tail -1 "$OUT/tests_h3.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_h3.log" | head -5
echo "=== lab ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s31_lean_lab.py" --more --variants def,full,h3,jnp \
  --out "$OUT/s31_full_h3_lab.txt" 2>"$OUT/lab.err" | cut -c1-300
echo "lab rc=$?"; grep -E "Error|error" "$OUT/lab.err" | head -5
