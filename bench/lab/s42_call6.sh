#!/usr/bin/env bash
# Session 42, call 6 (H200): Nsight Compute over one launch each of float32 LayerNorm 32-column kernels (the package's
# device code at 4 and 2 rows a thread, bench/lab/s40_onepack_lab.cu; the lab's copy, one reduction, two passes and
# 4-lane form, s42_ln32_lab.cu) and RMSNorm at 2 rows a thread: time, issue activity, instructions, stall reasons.
#   bash bench/lab/s42_call6.sh    (needs .dev/s39ptx.so, .dev/s40_op.ptx, .dev/s42_ln32.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
M="$(ncu_base_metrics),$(ncu_stall_metrics long_scoreboard short_scoreboard mio_throttle lg_throttle wait math_pipe_throttle no_instruction drain)"
M="$M,smsp__inst_executed_op_shfl.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts.sum"
(cd /tmp && export S42_LN32=6 S39_ROUNDS=0 S39_NO_PACKAGE=1 S41_NO_XLA=ln_f32_32,rms_f32_32 \
  S39_LAB_PTX=$REPO/.dev/s40_op.ptx,$REPO/.dev/s42_ln32.ptx &&
  ncu_run "$REPO/bench/lab/s39_xla_ptx_lab.py" "$M" "$REPO/.dev/s39ptx.so" ln_f32_32 rms_f32_32)
