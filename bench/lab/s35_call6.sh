#!/usr/bin/env bash
# Session 35, call 6 (H200): build (output-order 16-byte row copy at 128 x 1 with precomputed divisors, input order
# back at 256 x 2); the row copy lab again; softmax's window C = 6 against 8 at the 16-bit lengths the rule gives 8
# (12291-24571); bench/lab/s35_copy_lab.cu's int8 group with "smallcta" / "reg" (carried binary, CASES=int8); the
# benchmark's transposes.
#   bash bench/lab/s35_call6.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== copy lab int8 ($(left)s left)"
CASES=int8 timeout -k 5 60 "$REPO/.dev/copylab" 2>&1 | tee "$OUT/copy_lab_int8.txt" | grep -E "int8|ceiling"
echo "=== row copy lab ($(left)s left)"
timeout -k 5 200 python3 "$REPO/bench/lab/s35_rowcopy_lab.py" >"$OUT/rowcopy_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/rowcopy_lab.log" | cut -c1-200 | tail -50
echo "=== softmax window lab ($(left)s left)"
timeout -k 5 150 python3 "$REPO/bench/lab/s33_softmax_window_lab.py" --out "$OUT/s35_window_lab2.txt" \
  --dtypes bfloat16 --cases 24576x12291,16384x14339,16384x18435,12288x20483,12288x22531,12288x24571 \
  --variants regs,c6,c8,jnp >"$OUT/window_lab2.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/window_lab2.log" | cut -c1-200 | tail -14
echo "=== bench transposes ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 -m jax_kernels.bench --ops transpose --json "$OUT/bench_transpose.json" \
  >"$OUT/bench_transpose.log" 2>&1
echo "bench rc=$?"; grep -E "^transpose|ceiling" "$OUT/bench_transpose.log" | cut -c1-200 | tail -16
