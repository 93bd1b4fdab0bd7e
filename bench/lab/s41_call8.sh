#!/usr/bin/env bash
# Session 41, call 8 (H200; its first run lost the tokens and faulted in XLA's float32 kernel, run again): LayerNorm
# at 2048 columns (bf16 89.8-90.5% of the copy ceiling in the benchmarks, float16 94% on the same tier, float32
# 90-91%): build, then the package's tiers under JK_NORM_TIER beside the default and jnp, with the copy ceiling
# measured in the same process (bench/lab/s39_xla_ptx_lab.py, S41_WIDE=1 S41_CEILING=1; S41_WIDE2=1 from the
# environment: call 9's tokens, s41_call9.sh).
#   bash bench/lab/s41_call8.sh    (needs .dev/s39ptx.so)
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== s39_xla_ptx_lab ($(left)s left)"
S41_WIDE=1 S41_WIDE2=${S41_WIDE2:-0} S41_CEILING=1 S41_NO_XLA=ln_f32_2048 S39_ROUNDS=5 timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" \
  "$REPO/.dev/s39ptx.so" ln_bf16_2048 ln_f16_2048 ln_f32_2048 2>&1 \
  | grep -vE "^(WARNING|I0000|W0000)" | grep -vE "^  (PTX|HLO)" | grep -v "^E11" | tee "$OUT/s39_xla_ptx_lab.txt"
