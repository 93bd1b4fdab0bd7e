#!/usr/bin/env bash
# Session 33, call 3 (H200): build; tests/test_softmax.py -k window (the register-held window form at every bucket
# bound, and the two-pass form with JK_SOFTMAX_WINDOW_REGS=0); the softmax window lab (bench/lab/
# s33_softmax_window_lab.py: registers / two passes / the kVec = 1 tiers / jnp). Logs under $OUT.
#   [LAB_ARGS=...] bash bench/lab/s33_call3.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== softmax window tests ($(left)s left)"
timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_softmax.py" -k window \
  >"$OUT/tests_softmax_window.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_softmax_window.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_softmax_window.log" | head
echo "=== softmax window lab ($(left)s left)"
# shellcheck disable=SC2086  # LAB_ARGS is split on purpose
timeout -k 5 $(( $(left) - 8 )) python3 "$REPO/bench/lab/s33_softmax_window_lab.py" ${LAB_ARGS:-} \
  --out "$OUT/s33_softmax_window_lab.txt" >"$OUT/lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/lab.log" | cut -c1-420 | tail -50
