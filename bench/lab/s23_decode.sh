#!/usr/bin/env bash
# Session 23, calls 8 and 10 (S23_DECODE=2) (H200): bench/lab/s23_decode_lab.cu built on the device, timed back to back, then under Nsight Compute
# (gpu__time_duration alone: one pass, no replay, caches untouched, so b stays L2-resident between launches).
# S23_VARIANTS, S23_CASES and S23_NCU_CASES (space-separated) replace the variant list and both case lists (session 24,
# bench/lab/s24_decode_split.sh).
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
mkdir -p "$OUT" "$REPO/build"
cd "$REPO"
nvcc -std=c++17 -O3 -arch=sm_90a --expt-relaxed-constexpr -cudart static -I cuda -I bench/lab \
  bench/lab/s23_decode_lab.cu cuda/common/sm90.cu -o build/s23_decode_lab || exit 1
if [ "${S23_DECODE:-}" = 2 ]; then  # call 10: the swizzled layout and Triton's order, XLA's gemm under the same ncu
  V="pipe|read528|x128w4s3k32r8|x128w4s3k32zr8|x128w4s3k32lr8|x128w4s3k32zlr8|x128w4s4k32zr8|x128w4s3k64r8"
  V="$V|x128w4s3k64zr8"
  export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS="--xla_gpu_per_fusion_autotune_cache_dir=/tmp/jk_atc"
  NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  (cd /tmp && timeout 90 python3 "$REPO/bench/lab/s23_decode_ncu.py" >/dev/null 2>&1
   timeout 100 "$NCU" --clock-control none --cache-control none --metrics gpu__time_duration.sum \
     python3 "$REPO/bench/lab/s23_decode_ncu.py" >"$OUT/ncu_xla_1pass.txt" 2>&1)
  grep -E "gemm_fusion|loop_reduce|gpu__time_duration" "$OUT/ncu_xla_1pass.txt" | tail -8
else
  V="pipe|read264|read528|x128w4s3k64r8|x128w4s3k64r4|x128w4s3k64r16|x128w4s4k64r8|x128w8s3k64r8|x64w4s3k128r8"
  V="$V|x64w8s4k128r2|x64w8s4k128r4|x128w4s3k32r8|x256w8s3k32r8"
fi
V=${S23_VARIANTS:-$V}
CASES=${S23_CASES:-"8,4096,4096;4,4096,4096;8,2048,2048;8,4096,14336;8,14336,4096"} VARIANTS="$V" timeout 120 \
  build/s23_decode_lab 2>&1 | tee "$OUT/decode.txt"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for c in ${S23_NCU_CASES:-"8,4096,4096" "8,2048,2048"}; do
  for v in ${V//|/ }; do
    CASES="$c" VARIANTS="$v" ONCE=1 timeout 60 "$NCU" --clock-control none --cache-control none \
      --metrics gpu__time_duration.sum build/s23_decode_lab >"$OUT/ncu_one.txt" 2>&1
    python3 - "$OUT/ncu_one.txt" "$c" "$v" <<'PY' | tee -a "$OUT/decode_ncu.txt"
import re, sys, statistics
rows, order, cur = {}, [], None
for line in open(sys.argv[1]):
    if re.match(r"\s+\S.*\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)", line):
        cur = line.strip().split("(")[0].strip()[:58]
    m = re.match(r"\s+gpu__time_duration.sum\s+(\S+)\s+([\d.,]+)", line)
    if m and cur:
        v = float(m.group(2).replace(",", "")) * {"nsecond": 1e-3, "msecond": 1e3}.get(m.group(1), 1.0)
        rows.setdefault(cur, []).append(v)
        if cur not in order:
            order.append(cur)
total = sum(statistics.median(rows[k][-10:]) for k in order)
print(f"{sys.argv[2]:12s} {sys.argv[3]:15s} " + " + ".join(f"{k} {statistics.median(rows[k][-10:]):.2f}" for k in order)
      + f" = {total:.2f} us")
PY
  done
done
