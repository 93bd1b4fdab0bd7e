#!/usr/bin/env bash
# Session 26, call 1 (H200): build; the exact float32 split-K and wgmma tests; then the two labs
# (s26_simt_lab.py: the split kernels' forms; s26_wgmma_lab.py: the relaxed opening cluster barrier). The build was
# bench/lab/s26_call1_forms.patch on a7c4712 (its knobs are gone since).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 200 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= "$REPO/tests/test_matmul.py" \
  -k "float32_split_k or float32_simt or float32_ring or wgmma or multicast or pairs" >"$OUT/tests_lab.log" 2>&1
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_lab.log" | tail -15 | cut -c1-300
for lab in s26_simt_lab.py s26_wgmma_lab.py; do
  l=$(left)
  echo "=== $lab ($l s left)"
  XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l / 2 > 60 ? l / 2 : l - 10 )) \
    python3 "$REPO/bench/lab/$lab" 2>&1 | tee "$OUT/${lab%.py}.log" | grep -E "^\||device|FAILED|Error" | awk 'NR <= 60'
done
