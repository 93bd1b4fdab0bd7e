#!/usr/bin/env bash
# Session 34, call 3 (H200): build; what a plain elementwise pass and our row copy reach at 67 / 134 MB
# (bench/lab/s34_copy_lab.py) and Nsight Compute's launch statistics of XLA's x * c there; PDL on GPU-bound chains
# (bench/lab/s34_pdl_chain.py).
#   bash bench/lab/s34_call3.sh
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start 590
export XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "=== copy lab ($(left)s left)"
timeout -k 5 150 python3 "$REPO/bench/lab/s34_copy_lab.py" >"$OUT/copy_lab.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/copy_lab.log" | cut -c1-300 | tail -14
echo "=== ncu launch stats of x * c ($(left)s left)"
cat > /tmp/xc.py <<'PY'
import jax, jax.numpy as jnp
for n in (32 * 128 * 64 * 64 // 2, 8192 * 8192 // 4):
    x = jax.random.normal(jax.random.key(0), (n,), jnp.float32)
    f = jax.jit(lambda x: x * jnp.float32(1.0001))
    jax.block_until_ready(f(x)); jax.block_until_ready(f(x))
i8 = jax.random.randint(jax.random.key(0), (8192, 8192), -128, 127, jnp.int8)
g = jax.jit(lambda x: x + jnp.int8(1)); jax.block_until_ready(g(i8)); jax.block_until_ready(g(i8))
PY
timeout -k 5 90 ncu --csv --section LaunchStats --section SpeedOfLight python3 /tmp/xc.py > "$OUT/ncu_xc.csv" 2>"$OUT/ncu_xc.err"
echo "ncu rc=$?"
python3 - "$OUT/ncu_xc.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows: sys.exit("no rows")
h = rows[0]; ix = {k: h.index(k) for k in ("ID", "Kernel Name", "Metric Name", "Metric Value") if k in h}
want = ("Grid Size", "Block Size", "Registers Per Thread", "Duration", "DRAM Throughput", "Waves Per SM")
for r in rows[1:]:
    if r[ix["Metric Name"]] in want:
        print(r[ix["ID"]], r[ix["Kernel Name"]][:50], r[ix["Metric Name"]], r[ix["Metric Value"]])
PY
echo "=== pdl chains ($(left)s left)"
timeout -k 5 $(( $(left) - 10 )) python3 "$REPO/bench/lab/s34_pdl_chain.py" >"$OUT/chain.log" 2>&1
echo "lab rc=$?"; grep -vE "^(WARNING|I0000|W0000)" "$OUT/chain.log" | cut -c1-300 | tail -8
