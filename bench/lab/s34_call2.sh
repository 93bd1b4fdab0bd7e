#!/usr/bin/env bash
# Session 34, call 2 (H200): build; the read-only-path lab for the short norm rows (bench/lab/s34_nc_lab.py); PDL under
# XLA command buffers (bench/lab/s34_pdl_graph.py, default flags and forced); the norm row tests under JK_NORM_NC=1.
#   bash bench/lab/s34_call2.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== nc lab ($(left)s left)"
timeout -k 5 150 python3 "$REPO/bench/lab/s34_nc_lab.py" >"$OUT/nc_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/nc_lab.log" | cut -c1-300 | tail -20
for force in 0 1; do
  echo "=== pdl graph lab S34_FORCE=$force ($(left)s left)"
  S34_FORCE=$force timeout -k 5 120 python3 "$REPO/bench/lab/s34_pdl_graph.py" >"$OUT/graph_$force.log" 2>&1
  echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/graph_$force.log" | cut -c1-300 | tail -10
done
echo "=== tests JK_NORM_NC=1 ($(left)s left)"
JK_NORM_NC=1 timeout -k 5 $(( $(left) - 10 )) python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 \
  "$REPO/tests/test_norms.py" -k "rows or packed or optional or large_mean" >"$OUT/tests.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head
