#!/usr/bin/env bash
# Session 6's first check after the new defaults (one device call): build; the probes of bench/lab/s6_probe.py
# (norm parameter traffic, LayerNorm's one-reduction variant, bf16 1000^3 against 1024^3); the TF32 tests
# (linear on the lean epilogue, now the default) and the norm row tests on the default dispatch (float32 LayerNorm
# 4100-8192 and RMSNorm 16384 moved tiers) and with the one-reduction variant forced (removed since; the knob now
# runs the plain 64-register tier). Logs under $OUT. Results: bench/lab/s6_probe_h200.md.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-420}
l=$(left)
echo "=== probe (${l}s left)"
timeout -k 5 200 python3 "$REPO/bench/lab/s6_probe.py" --budget 170 >"$OUT/probe.log" 2>&1
echo "probe rc=$?"
grep -E "^(\||copy|device|budget|Trace|[A-Za-z]+Error)" "$OUT/probe.log" | cut -c1-300
l=$(left)
echo "=== tf32 + norms tests (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 60 > 150 ? 150 : l - 60 )) python3 -m pytest -q -n 12 \
  -p no:cacheprovider -o addopts= -m "not large" "$REPO/tests/test_matmul_tf32.py" "$REPO/tests/test_norms.py" \
  >"$OUT/tests_s6.log" 2>&1
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_s6.log" | tail -12 | cut -c1-300
norm_tier_tests "layer_norm_rows and float32" 60 50 2 "block2 8 512 1 1"
