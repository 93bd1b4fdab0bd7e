#!/usr/bin/env bash
# Session 15, device call 8 (H200, a lab build): SkinnyPipe's time split into copies / math / fixed costs
# (s15_decode_lab2.py), then Nsight Compute on the hoisted kernel at 8x4096x4096 (ours only).
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-400}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
l=$(left)
echo "=== decode lab ($l s left)"
XLA_FLAGS=--xla_gpu_enable_command_buffer= timeout -k 5 150 python3 "$REPO/bench/lab/s15_decode_lab2.py" \
  2>&1 | tee "$OUT/decode_lab2.log" | grep -E "^\||device|FAILED|Error" | head -30
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
l=$(left)
echo "=== ncu (${l}s left)"
METRICS="$(ncu_base_metrics),lts__t_bytes.sum,lts__t_sector_hit_rate.pct,sm__throughput.avg.pct_of_peak_sustained_elapsed"
METRICS="$METRICS,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed"
METRICS="$METRICS,$(ncu_stall_metrics barrier short_scoreboard long_scoreboard mio_throttle lg_throttle wait \
  not_selected no_instruction membar math_pipe_throttle dispatch_stall)"
timeout -k 5 $(( l - 10 )) "$NCU" --clock-control none --cache-control none -k regex:SkinnyPipe --metrics "$METRICS" \
  python3 -c "
import jax, jax.numpy as jnp, numpy as np, jax_kernels as jk
r = np.random.default_rng(0)
a = jax.device_put(r.standard_normal((8, 4096), np.float32).astype(jnp.bfloat16))
b = jax.device_put(r.standard_normal((4096, 4096), np.float32).astype(jnp.bfloat16))
f = jax.jit(jk.matmul)
for _ in range(3): jax.block_until_ready(f(a, b))
" >"$OUT/ncu_decode.log" 2>&1
echo "ncu rc=$?"; grep -E "^  [a-zA-Z]|==ERR|Error" "$OUT/ncu_decode.log" | cut -c1-150 | head -60
