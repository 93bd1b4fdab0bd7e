#!/usr/bin/env bash
# Prepared in session 28; run in session 29 (call 1 of bench/lab/s29_h200.md: the guard was not taken): 16-bit LayerNorm's guarded shift-free
# statistics on the packed short-row tier. Applies bench/lab/s28_norm_guard.patch (compiled on the CPU machine only:
# JK_NORM_GUARD=1 selects the kGuard kernels, 16-bit LayerNorm rows of <= 32 packs), builds, runs the norm row and
# large-mean tests under JK_NORM_GUARD=1, then bench/lab/s29_guard_lab.py; reverts the patch at the end (the
# device's checkout only). Logs: $OUT/tests_guard.log, $OUT/lab.log.
#   JK_TOTAL_S=560 bash bench/lab/s29_next_norm.sh
REPO=$(cd "$(dirname "$0")/../.." && pwd)
(cd "$REPO" && git apply bench/lab/s28_norm_guard.patch) || exit 1
trap '(cd "$REPO" && git apply -R bench/lab/s28_norm_guard.patch)' EXIT
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 560
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer=
echo "=== tests under JK_NORM_GUARD=1 ($(left)s left)"
JK_NORM_GUARD=1 timeout -k 5 90 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
  "$REPO/tests/test_norms.py" -k "rows or packed or optional or large_mean" >"$OUT/tests_guard.log" 2>&1
tail -1 "$OUT/tests_guard.log"
echo "=== lab ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s29_guard_lab.py" >"$OUT/lab.log" 2>&1
grep -E "^accuracy|^  |median|^device|Error|error" "$OUT/lab.log"
