#!/usr/bin/env bash
# Prepared in session 6 for the next session's first device call (~540 s; run it with the call's timeout at 600). Logs under $OUT.
#  1. build (sm_90a);
#  2. the norms' ring tier with the parameters staged in shared memory (JK_NORM_LONG="ring C U L 1", written in
#     session 6 after its device time ran out, never run): float32 LayerNorm/RMSNorm at 16384-65536 columns and
#     16-bit LayerNorm at 65536 against the default dispatch and jnp (bench/lab/softmax_long_lab.py, one process,
#     command buffers off). Why: on the two-read tier the per-row scale/bias reads from L2 are the limit
#     (bench/lab/s6_probe_h200.md: float32 LayerNorm 32768 at 63% of copy with scale and bias, 89% without);
#  3. float32 LayerNorm at 8192 columns, the bulk tier (default) against the 64-register tier ('block2 8 256'),
#     each in its own benchmark process (jax_kernels.bench --ops layer_norm --dtypes f32), with XLA command
#     buffers on (the benchmark's setting) and off: session 6's lab timed block2 3% faster, its benchmark 10%
#     slower (bench/lab/norm_block2_h200.txt);
#  4. bf16 matmuls with row pitches that are not a multiple of 128 bytes, 128x128 against 256-wide tiles;
#  5. with the time left, the long-row norm tests, staged rings included (tests/test_softmax_long.py -k norm).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-540}
l=$(left)
echo "=== staged ring lab (${l}s left)"
cases=""
for c in layer_norm:float32:32768 rms_norm:float32:32768 layer_norm:float32:65536 rms_norm:float32:65536 \
         layer_norm:float32:16384 layer_norm:bfloat16:65536; do cases="$cases --case $c"; done
# shellcheck disable=SC2086
timeout -k 5 170 python3 "$REPO/bench/lab/softmax_long_lab.py" $cases --budget 140 --log "$OUT/staged_lab.jsonl" \
  --ring s4u4=4,4,3,1 --ring s4u2=4,2,6,1 --ring s2u2=2,2,6,1 --ring s2u4=2,4,3,1 --ring s1u2=1,2,6,1 \
  --ring r4u2=4,2,6 >"$OUT/staged_lab.log" 2>&1
echo "lab rc=$?"
grep -vE "^(W0000|I0000)" "$OUT/staged_lab.log" | tail -60 | cut -c1-220
echo "=== float32 LayerNorm 8192: bulk vs block2, command buffers on/off ($(left)s left)"
for cb in on off; do
  for tier in default "block2 8 256"; do
    flags=""; [ $cb = off ] && flags="--xla_gpu_enable_command_buffer="
    if [ "$tier" = default ]; then unset JK_NORM_TIER; else export JK_NORM_TIER="$tier"; fi
    XLA_FLAGS="$flags" timeout -k 5 90 python3 -m jax_kernels.bench --ops layer_norm --dtypes f32 --no-progress \
      >"$OUT/ln8192_${cb}_$(echo $tier | tr ' ' '_').log" 2>&1
    echo "cb=$cb tier='$tier': $(grep -E '49152x(4096|8192|16384) ' "$OUT/ln8192_${cb}_$(echo $tier | tr ' ' '_').log" | tr -s ' ' | cut -d' ' -f3-5,10 | tr '\n' ';')"
  done
done
unset JK_NORM_TIER
# 4. bf16 matmuls whose row pitch is not a multiple of 128 bytes: the default (128x128 tiles below one wave of
#    256-wide ones) against the 256-wide tile and split-K (session 6: 2000^3 30.6 us on 128x128, 24.8 on 256-wide).
l=$(left)
echo "=== unaligned-pitch matmuls (${l}s left)"
timeout -k 5 $(( l > 70 ? 60 : l - 10 )) python3 "$REPO/bench/lab/s6_probe.py" --part matmul --budget 50 \
  --shapes 2000x2000x2000,1500x1500x1500,3000x3000x3000,1000x4000x4000,4000x1000x4000,2000x2048x2048,2048x2000x2000 \
  >"$OUT/unaligned_matmul.log" 2>&1
grep -E "^\|" "$OUT/unaligned_matmul.log"
l=$(left)
echo "=== long-row norm tests, staged rings included (${l}s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( l - 10 )) python3 -m pytest -q -n 8 -p no:cacheprovider -o addopts= \
  -k norm "$REPO/tests/test_softmax_long.py" >"$OUT/tests_long_norm.log" 2>&1
echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/tests_long_norm.log" | tail -10 | cut -c1-300
