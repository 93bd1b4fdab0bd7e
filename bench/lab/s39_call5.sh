#!/usr/bin/env bash
# Session 39, call 5 (H200): build; the transpose tests (GPU); the lean 32x33 tile (the default) against the register
# blocks ("nolean"), XLA's kernel as our custom call and the lab's PTX references (bench/lab/s39_xla_ptx_lab.py).
#   bash bench/lab/s39_call5.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
echo "=== tests ($(left)s left)"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 200 python3 -m pytest -q -p no:cacheprovider -o addopts= -n 8 \
  "$REPO/tests/test_transpose.py" >"$OUT/tests_transpose.log" 2>&1
echo "pytest rc=$?"; tail -1 "$OUT/tests_transpose.log"; grep -E "^(FAILED|ERROR)" "$OUT/tests_transpose.log" | head
echo "=== s39_xla_ptx_lab ($(left)s left)"
set -- ${@:-t_f32_2048x512 t_f32_1024x1024 t_f32_512x2048 t_f32_4096x256 t_i8_2048x512}
S39_LAB_PTX=$REPO/.dev/s39_transpose_lab.ptx XLA_PYTHON_CLIENT_PREALLOCATE=false timeout -k 5 $(( $(left) - 10 )) \
  python3 "$REPO/bench/lab/s39_xla_ptx_lab.py" "$REPO/.dev/s39ptx.so" "$@" 2>&1 | grep -vE "^(WARNING|I0000|W0000)" | tee "$OUT/s39_xla_ptx_lab.txt"
