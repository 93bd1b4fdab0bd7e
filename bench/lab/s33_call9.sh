#!/usr/bin/env bash
# Session 33, call 9 (H200): build; tests/test_softmax.py -k window (the CTA form's 4-or-8 rule); the softmax window lab
# with the rule (regs) against 4 and 8 packs forced (c4 / c8) and jnp, at the lab's rows and four more (--more); then
# the sanitizer over the parts windows and short_runs on this code.
#   bash bench/lab/s33_call9.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
cd /tmp
echo "=== softmax window tests ($(left)s left)"
timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 "$REPO/tests/test_softmax.py" -k window \
  >"$OUT/tests_softmax_window.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests_softmax_window.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_softmax_window.log" | head
echo "=== softmax window lab ($(left)s left)"
timeout -k 5 200 python3 "$REPO/bench/lab/s33_softmax_window_lab.py" --variants regs,c4,c8,jnp --more \
  --cols 1281,1537,2051,3075,4099,6147,8195,12291 --out "$OUT/s33_softmax_rule_lab.txt" >"$OUT/lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/lab.log" | cut -c1-210 | tail -50
echo "=== sanitizer ($(left)s left)"
JK_SANITIZE_PARTS=windows,short_runs JK_SANITIZE_TOOLS="memcheck racecheck synccheck" JK_SANITIZE_LOGS=$OUT/san \
  JK_SANITIZE_TIMEOUT=$(( $(left) - 120 )) timeout -k 5 $(( $(left) - 5 )) bash "$REPO/bench/sanitize.sh" 2>&1 | tail -4
