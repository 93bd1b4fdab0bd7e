#!/usr/bin/env bash
# Session 30 (H200, one call): build, then Nsight Compute over bench/lab/s30_split_ncu.py (the split tier's kernels and
# jnp's at two long-axis shapes): time, DRAM traffic, occupancy, issue activity and stall reasons per kernel.
#   JK_TOTAL_S=400 bash bench/lab/s30_split_ncu.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 400
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer=
M="$(ncu_base_metrics),sm__cycles_active.avg,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem"
M="$M,$(ncu_stall_metrics long_scoreboard short_scoreboard wait barrier lg_throttle mio_throttle not_selected)"
timeout -k 5 $(( $(left) - 20 )) "$NCU" --csv --page raw --cache-control none --clock-control none --metrics "$M" \
  python3 "$REPO/bench/lab/s30_split_ncu.py" >"$OUT/ncu.csv" 2>"$OUT/ncu.err"
echo "ncu rc=$? lines $(wc -l <"$OUT/ncu.csv")"
python3 - "$OUT/ncu.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
head = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
names = rows[head]
keys = [m for m in names if m.startswith(("gpu__", "dram__", "sm__", "smsp__", "launch__"))]
short = lambda m: m.replace("smsp__average_warps_issue_stalled_", "").replace("_per_issue_active.ratio", "") \
    .replace(".avg.pct_of_peak_sustained_active", "%").replace(".avg.pct_of_peak_sustained_elapsed", "%")
for r in rows[head + 2:]:
    d = dict(zip(names, r))
    print(d["Kernel Name"][:60], " ".join(f"{short(m)}={d[m]}" for m in keys if d.get(m) not in (None, "", "n/a")))
PY
