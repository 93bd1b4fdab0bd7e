#!/usr/bin/env bash
# Prepared in session 30 for the next session (H200, one call, ~250 s; not run): where each warp of the 32-column
# norm kernels waits, per SASS instruction, ours against XLA's. Session 30's profile (s30_h200.md call 1) found ours
# busy 15% longer with more fixed-latency ("wait") and pipe-throttle stalls per instruction; this samples the stall
# reason of every instruction (Nsight Compute's warp-state sampling, SourceCounters section) for bf16 LayerNorm
# 49152 x 32 (bench/lab/s30_norm32_ncu.py's first case) and prints the 25 instructions with the most samples of each
# kernel, with their stall reasons. Log: $OUT/sass_<kernel>.csv.
#   JK_TOTAL_S=400 bash bench/lab/s31_norm32_sass_stalls.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 400
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer= JK_NORM32_CASES=1
echo "=== ncu ($(left)s left)"
timeout -k 5 $(( $(left) - 60 )) "$NCU" --section SourceCounters --section WarpStateStats --cache-control none \
  --clock-control none --import-source no -o "$OUT/norm32" -f python3 "$REPO/bench/lab/s30_norm32_ncu.py" \
  >"$OUT/ncu.log" 2>&1
echo "ncu rc=$?"
for k in ShortRowsPacked fusion; do
  "$NCU" -i "$OUT/norm32.ncu-rep" --kernel-name "regex:$k" --launch-count 1 --page source --print-source sass --csv \
    >"$OUT/sass_$k.csv" 2>>"$OUT/ncu.log"
  python3 - "$OUT/sass_$k.csv" "$k" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
head = next((i for i, r in enumerate(rows) if "Source" in r), None)
if head is None:
    sys.exit(print(sys.argv[2], "no source page:", rows[:3]))
names = rows[head]
samp = next((c for c in names if c.startswith("Warp Stall Sampling (All")), None)
stalls = [c for c in names if c.startswith("stall_") or "Stall" in c and c != samp][:12]
body = [dict(zip(names, r)) for r in rows[head + 1:]]
num = lambda v: float((v or "0").replace(",", "") or 0)
total = sum(num(r.get(samp)) for r in body) or 1
print(f"== {sys.argv[2]}: {len(body)} instructions, {total:.0f} samples")
for r in sorted(body, key=lambda r: -num(r.get(samp)))[:25]:
    print(f"{100 * num(r.get(samp)) / total:5.1f}%  {r.get('Source', '')[:60]:60s}",
          " ".join(f"{c}={r[c]}" for c in stalls if num(r.get(c)) > 0))
PY
done
