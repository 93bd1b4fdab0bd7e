#!/usr/bin/env bash
# Session 24, call 2 (H200): is XLA's two-kernel decode structure (split-K gemm writing float32 partials, then a
# reduction kernel) faster for us than SkinnyPipe's one-kernel cluster reduction, now that both stream swizzled
# stages? bench/lab/s23_decode_lab.cu: back-to-back event times (launch gaps included), then one-pass Nsight Compute
# per kernel (gpu__time_duration alone, b stays L2-resident), as s23_decode.sh.
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$REPO/gpu_out}
mkdir -p "$OUT" "$REPO/build"
cd "$REPO"
nvcc -std=c++17 -O3 -arch=sm_90a --expt-relaxed-constexpr -cudart static -I cuda -I bench/lab \
  bench/lab/s23_decode_lab.cu cuda/common/sm90.cu -o build/s23_decode_lab || exit 1
V="pipe|read528|x128w4s3k32zr8|x128w4s4k32zr8|x128w4s3k32zr4|x128w4s3k32zr16"
CASES="8,4096,4096;4,4096,4096;8,2048,2048;8,4096,11008;8,11008,4096" VARIANTS="$V" timeout 120 build/s23_decode_lab \
  2>&1 | tee "$OUT/decode.txt"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for c in "8,4096,4096" "8,2048,2048" "8,4096,11008"; do
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
