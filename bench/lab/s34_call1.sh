#!/usr/bin/env bash
# Session 34, call 1 (H200): build with programmatic dependent launch (LaunchPdl) on the packed short norm rows and
# every transpose kernel; the lab (bench/lab/s34_pdl_lab.py: JK_PDL=1 / 0 against jnp, then chains end to end); the
# norm row tests and the transpose tests with PDL on (the default). Logs under $OUT, key lines printed.
#   bash bench/lab/s34_call1.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== XLA's PDL (strings of the CUDA plugin)"
so=$(python3 -c "import jax_plugins.xla_cuda13 as m, os; print(os.path.dirname(m.__file__))" 2>/dev/null)
for f in "$so"/*.so; do timeout 30 strings "$f" | grep -i -E "xla_gpu[a-z_]*pdl|pdl_launch" | sort -u | head -8; done
echo "=== pdl lab ($(left)s left)"
timeout -k 5 240 python3 "$REPO/bench/lab/s34_pdl_lab.py" >"$OUT/lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/lab.log" | cut -c1-400 | tail -40
echo "=== tests ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 -m pytest -q -p no:cacheprovider -o addopts= -n 16 \
  "$REPO/tests/test_transpose.py" "$REPO/tests/test_norms.py" -k "not large" >"$OUT/tests.log" 2>&1
echo "tests rc=$?"; tail -1 "$OUT/tests.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head
