#!/usr/bin/env bash
# Session 29 (H200, one call): the packed short-row norm tier before / after session 29's second instruction diet
# (bench/lab/s29_norm_diet2.patch: host-resolved rows of ones / zeros for 16-bit parameters, clamped loads for rows
# past the end, reductions from -0), A/B in alternating processes, each timing jnp too. Builds B (this checkout) and
# A (a copy with the patch reversed) side by side with pip --target /tmp/B, /tmp/A; runs tests/test_norms.py and
# tests/test_reliability.py on B; then s29_norm_ab_lab.py as A B, B A, A B, ... while time is left.
# Logs: $OUT/build_{A,B}.log, tests_norms.log, tests_reliability.log, lab.log (lines: TAG op dtype cols ours jnp).
#   JK_TOTAL_S=570 bash bench/lab/s29_ab.sh
. "$(dirname "$0")/norm_gpu_common.sh"  # set -uo pipefail, left()
lab_clock 570  # REPO, OUT, the time budget; the two builds below are this script's own
export JK_CUDA=ON JK_CUDA_ARCHS=${JK_CUDA_ARCHS:-90a-real} PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
[ -d "$REPO/.ffi_headers/xla" ] && export XLA_FFI_INCLUDE_DIR="$REPO/.ffi_headers"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
rm -rf /tmp/base && cp -r "$REPO" /tmp/base && rm -rf /tmp/base/build
(cd /tmp/base && patch -s -R -p1 <"$REPO/bench/lab/s29_norm_diet2.patch") || exit 1
build() {  # SRC TARGET TAG
  if python3 -m pip install --no-build-isolation --no-deps --target "$2" "$1" >"$OUT/build_$3.log" 2>&1; then
    echo "build $3 ok ($(( $(date +%s) - T0 ))s)"
  else
    echo "build $3 FAILED"; tail -30 "$OUT/build_$3.log"; return 1
  fi
}
build "$REPO" /tmp/B B & pb=$!
build /tmp/base /tmp/A A & pa=$!
wait $pb || exit 1
wait $pa || exit 1
cd /tmp
for f in norms reliability; do
  PYTHONPATH=/tmp/B timeout -k 5 120 python3 -m pytest -q -n 16 -p no:cacheprovider -o addopts= -m "not large" \
    "$REPO/tests/test_$f.py" >"$OUT/tests_$f.log" 2>&1
  echo "tests $f (B): $(tail -1 "$OUT/tests_$f.log")"
done
i=0
while [ "$(left)" -gt 100 ]; do
  order="A B"; [ $((i % 2)) = 1 ] && order="B A"
  for v in $order; do
    PYTHONPATH=/tmp/$v timeout -k 5 $(( $(left) - 5 )) python3 "$REPO/bench/lab/s29_norm_ab_lab.py" "$v" \
      >>"$OUT/lab.log" 2>>"$OUT/lab_err.log"
  done
  i=$((i + 1))
  echo "round $i done ($(left)s left)"
done
python3 - "$OUT/lab.log" <<'PY'
import collections, statistics, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 6 and f[0] in "AB" and f[4] != "ERROR":
        t[(f[1], f[2], int(f[3]), f[0])].append((float(f[4]), float(f[5])))
print("| op | dtype | cols | A us | B us | A / jnp | B / jnp | rounds |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for key in sorted({k[:3] for k in t}):
    a, b = t.get(key + ("A",), []), t.get(key + ("B",), [])
    if not a or not b:
        continue
    med = lambda v, i: statistics.median(x[i] for x in v)
    ra = statistics.median(x[1] / x[0] for x in a)
    rb = statistics.median(x[1] / x[0] for x in b)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {med(a, 0):.2f} | {med(b, 0):.2f} | {ra:.3f}x | {rb:.3f}x | {len(a)}/{len(b)} |")
PY
