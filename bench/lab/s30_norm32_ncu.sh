#!/usr/bin/env bash
# Prepared in session 29 for the next session (H200, one call, ~250 s; not run): build, then Nsight Compute over
# bench/lab/s30_norm32_ncu.py (ours and XLA's kernels for the short norm rows the sweep still misses), with the
# benchmark's conditions: no cache flush (--cache-control none), clocks as the card runs them (--clock-control none).
# Per kernel: time, cycles active, instructions, occupancy, and the stall reasons per issued instruction. XLA's
# kernels are the *fusion* / *triton* names, ours are jk::norm::*. Log: $OUT/ncu.csv; a per-kernel digest printed.
#   JK_TOTAL_S=400 bash bench/lab/s30_norm32_ncu.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 400
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
export XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer=
M="$(ncu_base_metrics),sm__cycles_active.avg,sm__cycles_elapsed.avg,smsp__warps_launched.sum"
M="$M,$(ncu_stall_metrics long_scoreboard short_scoreboard wait barrier no_instruction math_pipe_throttle lg_throttle \
  mio_throttle drain membar branch_resolving dispatch_stall not_selected selected)"
echo "=== ncu ($(left)s left)"
timeout -k 5 $(( $(left) - 20 )) "$NCU" --csv --page raw --cache-control none --clock-control none --metrics "$M" \
  python3 "$REPO/bench/lab/s30_norm32_ncu.py" >"$OUT/ncu.csv" 2>"$OUT/ncu.err"
echo "ncu rc=$? lines $(wc -l <"$OUT/ncu.csv")"
python3 - "$OUT/ncu.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
head = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
names = rows[head]
k = names.index("Kernel Name")
short = lambda m: m.replace("smsp__average_warps_issue_stalled_", "stall_").replace("_per_issue_active.ratio", "")
for r in rows[head + 2:]:
    d = dict(zip(names, r))
    print(d["Kernel Name"][:70])
    print("   " + ", ".join(f"{short(m)}={d[m]}" for m in names if m.startswith(("gpu__", "sm__", "smsp__", "launch__"))
                            and d.get(m) not in (None, "", "n/a")))
PY
