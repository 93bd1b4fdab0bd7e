#!/usr/bin/env bash
# Session 25, call 4 (H200), run at 4e997d3: the packed short-row tier before and after its instruction diet, in one
# call on one machine: build (after), lab; the header before the diet (s25_norm_short_diet.patch reversed: 1f693a0's
# header), incremental build, lab; the header after again, build, lab. The lab is s25_norm_short.py at 32 and 128
# columns.
# Logs: $OUT/lab_after1.log, lab_before.log, lab_after2.log.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 560
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer= S25_COLS="32 128"
H=$REPO/cuda/norm/norm_short_packed.cuh
cp "$H" /tmp/after.cuh
lab() {
  echo "=== lab $1 ($(left)s left)"
  timeout -k 5 150 python3 "$REPO/bench/lab/s25_norm_short.py" >"$OUT/lab_$1.log" 2>&1
  grep -E "^\| (layer|rms)" "$OUT/lab_$1.log" | awk -F'|' '{printf "%s %s %s %s %s\n", $2, $3, $4, $6, $7}' | head -30
}
build() { OUT=$OUT bash "$REPO/bench/gpu_check.sh" build | grep -E "build ok|error" ; cd /tmp; }
lab after1
patch -s -R "$H" "$REPO/bench/lab/s25_norm_short_diet.patch" || exit 1; build; lab before
cp /tmp/after.cuh "$H"; build; lab after2
