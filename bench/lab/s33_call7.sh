#!/usr/bin/env bash
# Session 33, call 7 (H200): build; bench/gpu_check.sh test-norm; tests/test_softmax.py -k window; the softmax window
# lab, the register form with and without its per-warp slot skip (regs / noskip / jnp); then the sanitizer (its own
# build with bounds assertions) over the parts windows and short_runs with memcheck, racecheck and synccheck.
#   bash bench/lab/s33_call7.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== test-norm ($(left)s left)"
mkdir -p "$OUT/norm" && cd "$REPO" && JK_TEST_WORKERS=16 JK_TEST_TIMEOUT=120 JK_LARGE_TESTS=0 OUT=$OUT/norm \
  bash bench/gpu_check.sh test-norm 2>&1 | grep -E "passed|failed" | tail -2; grep -E "^(FAILED|ERROR)" "$OUT/norm/tests.log" | head
cd /tmp
echo "=== softmax window tests ($(left)s left)"
timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_softmax.py" -k window \
  >"$OUT/tests_softmax_window.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_softmax_window.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_softmax_window.log" | head
echo "=== softmax window lab ($(left)s left)"
timeout -k 5 150 python3 "$REPO/bench/lab/s33_softmax_window_lab.py" --variants regs,noskip,jnp \
  --out "$OUT/s33_softmax_skip_lab.txt" >"$OUT/lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/lab.log" | cut -c1-330 | tail -40
echo "=== sanitizer ($(left)s left)"
JK_SANITIZE_PARTS=windows,short_runs JK_SANITIZE_TOOLS="memcheck racecheck synccheck" JK_SANITIZE_LOGS=$OUT/san \
  JK_SANITIZE_TIMEOUT=$(( $(left) - 120 )) timeout -k 5 $(( $(left) - 5 )) bash "$REPO/bench/sanitize.sh" 2>&1 | tail -8
for f in "$OUT"/san/sanitize_*.log; do echo "== $f"; grep -E "ERROR SUMMARY|cases|WRONG" "$f" | tail -3; done
