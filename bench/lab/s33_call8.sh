#!/usr/bin/env bash
# Session 33, call 8 (H200): build; tests/test_softmax.py -k window as committed and with JK_SOFTMAX_WINDOW_C=2 (2 packs
# a thread in the CTA form); the softmax window lab, 2 / 4-8 / 8 packs a thread (c2 / regs / c8) against jnp; then the
# sanitizer over the parts windows and short_runs on this code (the skip of call 7 reverted).
#   bash bench/lab/s33_call8.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
cd /tmp
for c in "" 2; do
  echo "=== softmax window tests, JK_SOFTMAX_WINDOW_C='$c' ($(left)s left)"
  JK_SOFTMAX_WINDOW_C=$c timeout -k 5 120 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 \
    "$REPO/tests/test_softmax.py" -k window >"$OUT/tests_softmax_window_c$c.log" 2>&1
  echo "tests rc=$?"; tail -1 "$OUT/tests_softmax_window_c$c.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_softmax_window_c$c.log" | head
done
echo "=== softmax window lab ($(left)s left)"
timeout -k 5 200 python3 "$REPO/bench/lab/s33_softmax_window_lab.py" --variants regs,c2,c8,jnp \
  --out "$OUT/s33_softmax_c_lab.txt" >"$OUT/lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/lab.log" | cut -c1-250 | tail -40
echo "=== sanitizer ($(left)s left)"
JK_SANITIZE_PARTS=windows,short_runs JK_SANITIZE_TOOLS="memcheck racecheck synccheck" JK_SANITIZE_LOGS=$OUT/san \
  JK_SANITIZE_TIMEOUT=$(( $(left) - 120 )) timeout -k 5 $(( $(left) - 5 )) bash "$REPO/bench/sanitize.sh" 2>&1 | tail -4
