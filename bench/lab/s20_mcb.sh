#!/usr/bin/env bash
# Session 20, device call 3 (H200): build (sm_90a); the Hopper-tier tests of the b-sharing multicast pairs
# (JK_MATMUL_WGMMA_MCB=1: the w256_mcb and mcb variants), then bench/lab/s20_pitch_lab.py's multicast cases.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== mcb tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= "$REPO/tests/test_matmul.py" \
  -k "mcb or (wgmma and default)" 2>&1 | tail -6 | cut -c1-300
l=$(left)
echo "=== mcb lab ($l s left)"
S20_LAB=mcb XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( l - 10 )) python3 "$REPO/bench/lab/s20_pitch_lab.py" \
  2>&1 | tee "$OUT/mcb_lab.log" | grep -E "^\||device|FAILED|Error" | head -80
