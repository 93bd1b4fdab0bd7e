#!/usr/bin/env bash
# Session 16, device call 1 (H200): build (sm_90a); the Hopper tier's cp.async producer (JK_MATMUL_WGMMA_LOAD,
# WgmmaCpAsyncProducer) and the exact-float32 split-K's vectorised reduction: the matmul and linear tests, the
# pitch lab with TMA against cp.async loads, the small float32 lab, then Nsight Compute (clocks and caches
# untouched) on the 128x64 tiles at 1024^3 with rows off 32-byte boundaries.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-580}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -x -n 8 -p no:cacheprovider "$REPO/tests/test_matmul.py" \
  -k "wgmma or split" -m "not large" >"$OUT/tests_matmul.log" 2>&1; tail -3 "$OUT/tests_matmul.log"
timeout -k 5 120 python3 -m pytest -q -x -n 8 -p no:cacheprovider "$REPO/tests/test_linear_epilogue.py" \
  >"$OUT/tests_linear.log" 2>&1; tail -3 "$OUT/tests_linear.log"
echo "=== pitch lab ($(left)s left)"
timeout -k 5 150 python3 "$REPO/bench/lab/matmul_pitch_lab.py" --load --budget 120 \
  --shapes 1000x1000x1000,1024x1024x1024,1024x1024x1000,1024x1000x1024,2000x2000x2000,3000x3000x3000,4096x4096x4096,4000x1000x4000,4096x4096x4000 \
  2>&1 | tee "$OUT/pitch.log" | grep -E "^\||device|Error"
echo "=== f32 small lab ($(left)s left)"
timeout -k 5 90 python3 "$REPO/bench/lab/matmul_small_s4_lab.py" "f32 HIGHEST" 2>&1 | tee "$OUT/f32.log" \
  | grep -E "^\||Error|FAILED"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
l=$(left)
echo "=== ncu (${l}s left)"
METRICS="$(ncu_base_metrics),lts__t_sectors.sum,lts__t_requests.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed"
METRICS="$METRICS,sm__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_sectors.sum"
METRICS="$METRICS,smsp__cycles_active.avg,sm__cycles_elapsed.avg.per_second"
timeout -k 5 $(( l - 10 )) "$NCU" --clock-control none --cache-control none -k regex:Wgmma --metrics "$METRICS" \
  python3 "$REPO/bench/lab/s16_ncu.py" >"$OUT/ncu.log" 2>&1
echo "ncu rc=$?"; grep -E "^  [a-zA-Z]|ran |==ERR|Error" "$OUT/ncu.log" | cut -c1-150 | head -150
