#!/usr/bin/env bash
# Session 32, call 7 (H200): build; the norms at row lengths off the issue's sweep (bench/lab/norm_sweep.py --cols:
# odd and non-power-of-two lengths across every tier boundary, both norms, three dtypes) against jnp. Logs under $OUT.
#   bash bench/lab/s32_call7.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== off-grid sweep ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/norm_sweep.py" --deadline 0 \
  --cols 96,192,384,640,1001,1536,3000,4099,5000,6144,7168,10240,12288,20000,24576,40000,49152 \
  >"$OUT/s32_offgrid_sweep.txt" 2>&1
echo "sweep rc=$?"; grep -A8 "norm sweep summary" "$OUT/s32_offgrid_sweep.txt" | head -3; grep -E "^(layer_norm|rms_norm):" "$OUT/s32_offgrid_sweep.txt"
