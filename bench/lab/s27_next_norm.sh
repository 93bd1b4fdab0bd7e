#!/usr/bin/env bash
# Prepared in session 27 for the next session: the short norm rows' load layout. Ran as session 28's call 1
# (bench/lab/s28_h200.md); s27_norm_rows.patch has been part of the code since (extended), so it no longer applies.
# Build as committed, s27_norm_layout_lab.py (the persistent short-row tier's whole-row loads, 32-bit and 64-bit
# indices, against the packed default and jnp); then s27_norm_rows.patch applied (R rows a lane group in the packed
# tier), an incremental build, the same lab with S27_ROWS=1 (adds "packed 1 4", "packed 1 2", "packed 2 2") and the
# packed-row tests under "packed 1 4"; the patch is reverted at the end (the checkout on the device only).
# Logs: $OUT/lab_base.log, $OUT/lab_rows.log, $OUT/tests_rows.log.
#   JK_TOTAL_S=560 bash bench/lab/s27_next_norm.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 560
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer=
lab() {
  echo "=== lab $1 ($(left)s left)"
  timeout -k 5 $(( $(left) - ${2:-20} )) python3 "$REPO/bench/lab/s27_norm_layout_lab.py" >"$OUT/lab_$1.log" 2>&1
  grep -E "^\|" "$OUT/lab_$1.log" | head -40
}
lab base 260
(cd "$REPO" && git apply bench/lab/s27_norm_rows.patch) || exit 1
OUT=$OUT bash "$REPO/bench/gpu_check.sh" build | grep -E "build ok|error"
cd /tmp
echo "=== tests under packed 1 4 ($(left)s left)"
JK_NORM_TIER="packed 1 4" timeout -k 5 90 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
  "$REPO/tests/test_norms.py" -k "rows or packed or optional" >"$OUT/tests_rows.log" 2>&1
tail -1 "$OUT/tests_rows.log"
S27_ROWS=1 lab rows 10
(cd "$REPO" && git apply -R bench/lab/s27_norm_rows.patch)
