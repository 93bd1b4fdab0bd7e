# Sourced by the norm labs' one-call GPU scripts (norm_half_gpu.sh, norm_short_gpu.sh, norm_packed_gpu.sh):
# the start (build, the time budget) and the steps they share. Not run on its own.
#   lab_clock DEFAULT_S           REPO, OUT, left() (seconds left of JK_TOTAL_S, default DEFAULT_S), no build
#   norm_gpu_start DEFAULT_S      lab_clock, then builds (bench/gpu_check.sh build; exits on failure; not with
#                                 JK_NO_BUILD=1) and cds to /tmp (the installed package, not the source tree)
#   norm_short_lab T_MARGIN B_MARGIN ARGS...   bench/lab/norm_short_lab.py ARGS under a timeout of left - T_MARGIN
#                                 and --budget left - B_MARGIN; log $OUT/lab.log, errors and the report printed
#   norm_tier_tests K HI T DIV TIER...   the tests of tests/test_norms.py matching -k K with JK_NORM_TIER=TIER,
#                                 each given T seconds (left / DIV when HI or fewer are left); $OUT/tests_TIER.log
#   norm_default_tests            the default dispatch's suite (not large) with the time left; $OUT/tests.log
#   matmul_tests                  tests/test_matmul.py + tests/test_linear_epilogue.py with the time left;
#                                 $OUT/tests_matmul.log
#   norm_long_tests T             tests/test_softmax_long.py + tests/test_norms.py (-n 16) under a timeout of T s;
#                                 $OUT/tests_long_norms.log, its summary and failures printed
#   ptx_lab T CASE...             bench/lab/s39_xla_ptx_lab.py over CASEs (its env from the caller: S39_*, S42_*, ...)
#                                 under a timeout of T s from /tmp, its launch details dropped; $OUT/$PTX_LAB_LOG
#                                 (default s39_xla_ptx_lab.txt)
#   ncu_base_metrics, ncu_stall_metrics REASON...   Nsight Compute metric lists (see below)
#   ncu_run SCRIPT METRICS [ARGS...]  Nsight Compute over python3 SCRIPT ARGS with the benchmark's conditions (no cache flush,
#                                 clocks as the card runs them) into $OUT/ncu.csv, then one line per kernel: its
#                                 name and every collected metric
set -uo pipefail

lab_clock() {
  REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  OUT=${OUT:-$REPO/gpu_out}
  mkdir -p "$OUT"
  T0=$(date +%s)
  TOTAL=${JK_TOTAL_S:-$1}
}

norm_gpu_start() {
  lab_clock "$1"
  export JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} PYTHONUNBUFFERED=1
  # JK_NO_BUILD=1: a script run after another in the same call keeps the package that one built.
  if [ "${JK_NO_BUILD:-0}" != 1 ]; then OUT=$OUT bash "$REPO/bench/gpu_check.sh" build || exit 1; fi
  cd /tmp
}

left() { echo $(( TOTAL - ($(date +%s) - T0) )); }

norm_long_tests() {
  echo "=== tests ($(left)s left)"
  timeout -k 5 "$1" python3 -m pytest -q -p no:cacheprovider -o addopts= -x -n 16 \
    "$REPO/tests/test_softmax_long.py" "$REPO/tests/test_norms.py" >"$OUT/tests_long_norms.log" 2>&1
  echo "tests rc=$?"; tail -1 "$OUT/tests_long_norms.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_long_norms.log" | head
}

ptx_lab() {
  echo "=== s39_xla_ptx_lab ($(left)s left)"
  (cd /tmp && XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 "$1" python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" \
    "$REPO/.dev/s39ptx.so" "${@:2}" 2>&1 | grep -vE "^(WARNING|I0000|W0000)" | grep -vE "^  (PTX|HLO|thunk|launch)" \
    | tee "$OUT/${PTX_LAB_LOG:-s39_xla_ptx_lab.txt}")
}

# Nsight Compute metric lists (comma-joined) for the labs' profiles: ncu_base_metrics, the kernel's time, DRAM
# traffic, issue activity, occupancy and instruction count; ncu_stall_metrics REASON..., those stall reasons per
# issued instruction (barrier, long_scoreboard, ...).
ncu_base_metrics() {
  local m="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum"
  m="$m,dram__bytes_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_active"
  m="$m,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread"
  echo "$m,smsp__inst_executed.sum"
}
ncu_stall_metrics() {
  local r m=""
  for r in "$@"; do m="$m,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
  echo "${m#,}"
}

norm_short_lab() {
  local tm=$1 bm=$2 l
  shift 2
  l=$(left)
  echo "=== lab (${l}s left)"
  timeout -k 5 $(( l - tm )) python3 "$REPO/bench/lab/norm_short_lab.py" "$@" --budget $(( l - bm )) \
    >"$OUT/lab.log" 2>&1
  echo "lab rc=$?"
  grep -vE "^(WARNING|I0000|W0000)" "$OUT/lab.log" | grep -v "^$" | head -60 | cut -c1-400 \
    | grep -E "^(copy|budget|Trace|[A-Za-z]+Error)"
  sed -n '/==== norm_short_lab/,$p' "$OUT/lab.log"
}

norm_tier_tests() {
  local k=$1 hi=$2 th=$3 div=$4 tier l t log
  shift 4
  for tier in "$@"; do
    l=$(left); t=$(( l > hi ? th : l / div ))
    log="$OUT/tests_$(echo $tier | tr ' ' '_').log"
    echo "=== tests, JK_NORM_TIER='$tier' (${l}s left, ${t}s)"
    JK_NORM_TIER="$tier" JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 "$t" python3 -m pytest -q \
      -p no:cacheprovider -o addopts="" -n 8 --maxfail=20 -k "$k" "$REPO/tests/test_norms.py" >"$log" 2>&1
    echo "pytest rc=$?"
    grep -E "^(FAILED|ERROR)|passed|failed" "$log" | tail -8 | cut -c1-300
  done
}

norm_default_tests() {
  local l t
  l=$(left); t=$(( l - 8 ))
  echo "=== tests, default dispatch (${l}s left)"
  JK_LARGE_TESTS=0 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 "$t" python3 -m pytest -q -p no:cacheprovider \
    -o addopts="" -n 8 --maxfail=20 -m "not large" "$REPO/tests/test_norms.py" >"$OUT/tests.log" 2>&1
  echo "pytest rc=$?"
  grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests.log" | tail -8 | cut -c1-300
}

matmul_tests() {
  local l
  l=$(left)
  echo "=== matmul tests (${l}s left)"
  XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 10 )) python3 -m pytest -q -n 8 -p no:cacheprovider \
    -o addopts= "$REPO/tests/test_matmul.py" "$REPO/tests/test_linear_epilogue.py" >"$OUT/tests_matmul.log" 2>&1
  echo "pytest rc=$?"
  grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_matmul.log" | tail -15 | cut -c1-300
}

ncu_run() {
  local ncu
  ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  echo "=== ncu ($(left)s left)"
  XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 $(( $(left) - 20 )) \
    "$ncu" --csv --page raw --cache-control none --clock-control none --metrics "$2" python3 "$1" "${@:3}" \
    >"$OUT/ncu.csv" 2>"$OUT/ncu.err"
  echo "ncu rc=$? lines $(wc -l <"$OUT/ncu.csv")"
  python3 - "$OUT/ncu.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
head = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
names = rows[head]
keys = [m for m in names if m.startswith(("gpu__", "dram__", "lts__", "sm__", "smsp__", "launch__"))]
short = lambda m: m.replace("smsp__average_warps_issue_stalled_", "stall_").replace("_per_issue_active.ratio", "")
for r in rows[head + 2:]:
    d = dict(zip(names, r))
    print(d["Kernel Name"][:60], " ".join(f"{short(m)}={d[m]}" for m in keys if d.get(m) not in (None, "", "n/a")))
PY
}
