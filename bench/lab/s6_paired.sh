#!/usr/bin/env bash
# One device call: build; bench/lab/s6_probe.py --part paired (the paired two-read kernel against the default
# dispatch and jnp on long rows); tests/test_norms.py with the paired kernel forced on every vectorised row.
. "$(dirname "$0")/norm_gpu_common.sh"
norm_gpu_start ${JK_TOTAL_S:-300}
l=$(left)
echo "=== paired lab (${l}s left)"
timeout -k 5 150 python3 "$REPO/bench/lab/s6_probe.py" --part paired --budget 130 >"$OUT/paired.log" 2>&1
echo "lab rc=$?"
grep -E "^(\||copy|device|budget|Trace|[A-Za-z]+Error)" "$OUT/paired.log" | cut -c1-300
norm_tier_tests "test_" 60 60 2 "tworeads 512 2"
