#!/usr/bin/env bash
# Session 11, device call 7 (~300 s), run at commit 65e32c2: build (sm_90a); float32 cluster-tier rows with
# streaming cache hints (softmax_long_lab.py --stats: "def" against "stream", JK_SOFTMAX_STREAM=1, a knob of that
# commit, removed after it tied: bench/lab/s11_h200.md) and jnp; then the cluster tests under the knob. Logs
# under $OUT.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-400}
l=$(left)
echo "=== stream lab (${l}s left)"
timeout -k 5 $(( l - 60 )) python3 "$REPO/bench/lab/softmax_long_lab.py" --stats --budget $(( l - 120 )) \
  --log "$OUT/stream_lab.jsonl" --case softmax:float32:65536 --case log_softmax:float32:65536 \
  --case softmax:float32:32768 --case log_softmax:float32:32768 >"$OUT/stream_lab.log" 2>&1
echo "lab rc=$?"
sed -n '/== long rows lab/,$p' "$OUT/stream_lab.log" | cut -c1-400
grep -E "Error|Traceback|budget" "$OUT/stream_lab.log" | head -5
l=$(left)
echo "=== cluster tests under the knob (${l}s left)"
JK_SOFTMAX_STREAM=1 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 5 )) python3 -m pytest -q -n 12 \
  -p no:cacheprovider -o addopts= -k "cluster or stats" "$REPO/tests/test_softmax_long.py" >"$OUT/tests_stream.log" 2>&1
echo "tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_stream.log" | tail -6 | cut -c1-300
