#!/usr/bin/env bash
# Session 26, call 2 (H200): build; the exact float32 tests; Nsight Compute (clocks and caches untouched) on
# bench/lab/s26_ncu.py: kernel metrics and stall reasons for jnp's and our 512x512x256 kernels, then our split-K
# kernel's per-instruction (SASS) stall samples (SourceCounters), as CSV in $OUT/src.csv.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-420}
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS="--xla_gpu_per_fusion_autotune_cache_dir=/tmp/jk_atc"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
echo "=== tests ($(left)s left)"
timeout -k 5 150 python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= "$REPO/tests/test_matmul.py" \
  -k "float32 or split or decode" >"$OUT/tests_lab.log" 2>&1
echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_lab.log" | tail -15 | cut -c1-200
timeout -k 5 90 python3 "$REPO/bench/lab/s26_ncu.py" >"$OUT/ncu_warm.log" 2>&1
echo "warm rc=$?"
echo "=== ncu metrics ($(left)s left)"
METRICS="$(ncu_base_metrics),launch__block_size,launch__cluster_dim_x,sm__cycles_active.avg,sm__cycles_elapsed.avg"
METRICS="$METRICS,smsp__inst_executed_pipe_fma.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
METRICS="$METRICS,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
METRICS="$METRICS,$(ncu_stall_metrics barrier short_scoreboard long_scoreboard mio_throttle lg_throttle wait \
  not_selected no_instruction membar math_pipe_throttle dispatch_stall selected)"
timeout -k 5 120 "$NCU" --clock-control none --cache-control none --metrics "$METRICS" \
  python3 "$REPO/bench/lab/s26_ncu.py" >"$OUT/ncu.log" 2>&1
echo "ncu rc=$?"; grep -E "^  [a-zA-Z]|ran |==ERR|Error" "$OUT/ncu.log" | cut -c1-160 | head -120
echo "=== ncu source ($(left)s left)"
timeout -k 5 120 "$NCU" --clock-control none --cache-control none -k regex:SimtRegisterBlockedSplit -c 1 \
  --section SourceCounters --section WarpStateStats -o "$OUT/split" -f python3 "$REPO/bench/lab/s26_ncu.py" \
  >"$OUT/ncu_src.log" 2>&1
echo "ncu src rc=$?"; tail -3 "$OUT/ncu_src.log"
"$NCU" -i "$OUT/split.ncu-rep" --page source --csv --print-source sass >"$OUT/src.csv" 2>"$OUT/src.err"
echo "export rc=$? $(wc -l <"$OUT/src.csv") lines"; head -c 600 "$OUT/src.err"
