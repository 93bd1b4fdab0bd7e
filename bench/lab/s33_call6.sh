#!/usr/bin/env bash
# Session 33, call 6 (H200): build; bench/gpu_check.sh test-norm; the benchmark (bench/gpu_check.sh bench: results
# JSON, tables, plots under $OUT/bench); then Nsight Compute over bench/lab/s33_softmax_ncu.py (the softmax window
# tier's 16-bit rows against the aligned block tier). Logs under $OUT.
#   bash bench/lab/s33_call6.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== test-norm ($(left)s left)"
mkdir -p "$OUT/norm" && cd "$REPO" && JK_TEST_WORKERS=16 JK_TEST_TIMEOUT=120 JK_LARGE_TESTS=0 OUT=$OUT/norm \
  bash bench/gpu_check.sh test-norm 2>&1 | tail -3; grep -E "^(FAILED|ERROR)" "$OUT/norm/tests.log" | head
echo "=== bench ($(left)s left)"
mkdir -p "$OUT/bench" && cd "$REPO" && OUT=$OUT/bench timeout -k 5 $(( $(left) - 70 )) bash bench/gpu_check.sh bench \
  2>&1 | tail -5
cd /tmp
M="$(ncu_base_metrics),sm__cycles_active.avg,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read.sum"
M="$M,$(ncu_stall_metrics long_scoreboard short_scoreboard wait barrier no_instruction math_pipe_throttle lg_throttle \
  mio_throttle drain membar not_selected selected)"
ncu_run "$REPO/bench/lab/s33_softmax_ncu.py" "$M" | cut -c1-900
