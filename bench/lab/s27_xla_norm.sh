#!/usr/bin/env bash
# Session 27 (H200, no build): XLA's kernels for the short norm rows (bench/lab/s27_xla_norm.py): the dump
# ($OUT/xla_norm_dump.tar.gz: HLO, PTX) and Nsight Compute's launch statistics and throughput of every kernel
# ($OUT/ncu_xla_norm.csv).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
mkdir -p "$OUT/xla_norm_dump"
cd /tmp
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS="--xla_gpu_enable_command_buffer="
XLA_FLAGS="$XLA_FLAGS --xla_dump_to=$OUT/xla_norm_dump --xla_dump_hlo_as_text" \
  timeout -k 5 120 python3 "$REPO/bench/lab/s27_xla_norm.py" 2>&1 | tail -8
tar -C "$OUT" -czf "$OUT/xla_norm_dump.tar.gz" xla_norm_dump && rm -rf "$OUT/xla_norm_dump"
timeout -k 5 200 ncu --csv --page details --section LaunchStats --section Occupancy --section SpeedOfLight \
  --section SchedulerStats --section WarpStateStats --section InstructionStats \
  python3 "$REPO/bench/lab/s27_xla_norm.py" > "$OUT/ncu_xla_norm.csv" 2> "$OUT/ncu_xla_norm.err"
echo "ncu rc=$? lines $(wc -l < "$OUT/ncu_xla_norm.csv")"
grep -o '"[a-z_]*fusion[^"]*"' "$OUT/ncu_xla_norm.csv" | sort | uniq -c | head -20
