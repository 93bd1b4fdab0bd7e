#!/usr/bin/env bash
# Session 41, call 1 (H200): RMSNorm 16-bit 128 columns, the package's kernel as a lab kernel (s40_onepack_lab.cu)
# beside the schedules of bench/lab/s41_rms128_lab.cu, jnp and XLA's kernel (no package build), 9 rotated rounds;
# then Nsight Compute over one launch of each (time, issue activity, stall reasons).
#   bash bench/lab/s41_call1.sh    (needs .dev/s39ptx.so, .dev/s40_op.ptx, .dev/s41_rms.ptx)
. "$(dirname "$0")/norm_gpu_common.sh"
lab_clock 590
echo "=== s39_xla_ptx_lab ($(left)s left)"
(cd /tmp && S41_RMS=1 S39_ROUNDS=9 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s40_op.ptx,$REPO/.dev/s41_rms.ptx \
  XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 240 python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" \
  "$REPO/.dev/s39ptx.so" rms_bf16_128 rms_f16_128 2>&1 \
  | grep -vE "^(WARNING|I0000|W0000)" | grep -vE "^  (PTX|HLO|thunk|launch)" | tee "$OUT/s39_xla_ptx_lab.txt")
M="$(ncu_base_metrics),$(ncu_stall_metrics long_scoreboard short_scoreboard wait lg_throttle drain no_instruction)"
echo "=== ncu ($(left)s left)"
(cd /tmp && S41_RMS=1 S39_ROUNDS=0 S39_NO_PACKAGE=1 S39_LAB_PTX=$REPO/.dev/s40_op.ptx,$REPO/.dev/s41_rms.ptx \
  XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( $(left) - 10 )) \
  ncu --csv --page raw --cache-control none --clock-control none --metrics "$M" python3 \
  "$REPO/bench/lab/s39_xla_ptx_lab.py" "$REPO/.dev/s39ptx.so" rms_bf16_128 rms_f16_128 >"$OUT/ncu.csv" 2>"$OUT/ncu.err")
echo "ncu rc=$? lines $(wc -l <"$OUT/ncu.csv")"
python3 - "$OUT/ncu.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
head = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
names = rows[head]
keys = [m for m in names if m.startswith(("gpu__", "dram__", "lts__", "sm__", "smsp__", "launch__"))]
short = lambda m: m.replace("smsp__average_warps_issue_stalled_", "st_").replace("_per_issue_active.ratio", "")
for r in rows[head + 2:]:
    d = dict(zip(names, r))
    if d.get("launch__grid_size") not in ("384", "768"): continue
    print(d["Kernel Name"][:28], " ".join(f"{short(m)}={d[m]}" for m in keys if d.get(m) not in (None, "", "n/a")))
PY
