"""Transpose dispatch settings against each other and jnp, in one device call.

Runs bench/lab/transpose_cases.py once per JK_TRANSPOSE_TIERS setting (one process each, as when the
launcher read the knob once per process; bench/lab/transpose_s4.py now does it in one), each on the cases
its knobs can change, and prints one table: per case the default and
every variant, ours vs jnp of the same process (ratio = jnp time / ours), GB/s and % of the copy
ceiling measured by the default process. Method as transpose_cases.py: CUPTI kernel time, median of 20
calls (fewer past 256 MB), better of two alternated rounds, equality with jnp (and NumPy under 64 MB).
The default process also times `-x` on each case's input ("copy us": a streaming kernel of the same
bytes). Knob tokens: transpose_launch.cu (TierKnobs).

  python3 transpose_variants.py [DEADLINE_S]   (stops starting variants when the deadline is near)
"""
from __future__ import annotations

import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SMALL = ["2048x512@float32", "2048x512@bfloat16", "2048x512@int8"]
SPLIT = ["8x16x32x64x2 (4,0,3,1,2)@float32"]
BIG_I8 = ["8192x8192@int8", "16384x16384@int8"]
BIG_16_32 = ["8192x8192@bfloat16", "16384x16384@bfloat16", "8192x8192@float32", "16384x16384@float32",
             "64x1024x1024 swap@float32"]
ROWS = ["32x128x64x64 (0,2,1,3)@bfloat16"]
REG = SMALL + SPLIT + BIG_I8 + ["8192x8192@bfloat16", "8192x8192@float32"]
# (tag, JK_TRANSPOSE_TIERS, cases or None for all, extra args); in order of priority. The session-3 run
# (bench/lab/transpose_results_h200.md) timed tokens since removed from the launcher (reg2/reg4/reg8,
# sm64/sm256, t512/t128, rowin/row8, pipe) at commit 89cb8d8; round 2 timed i8w512/i8w256 (256x256-byte
# int8 tile), persist and rowfast at commit 06ce451. Today's settings: the default, the round-1 dispatch
# (r1: no 256x256 int8 tile), the session-2 dispatch (s2) and the register-block kernel everywhere (reg).
RUNS = [
    ("default", "", None, ["--copyref"]),
    ("r1", "r1", BIG_I8, ["--no-ceiling"]),
    ("s2", "s2", None, ["--no-ceiling"]),
    ("reg", "reg", REG, ["--no-ceiling"]),
]


def run(tag, knob, cases, args, timeout):
    env = dict(os.environ, JK_TRANSPOSE_TIERS=knob, JK_LAB_CASES=";".join(cases or []))
    t0 = time.time()
    try:
        r = subprocess.run([sys.executable, os.path.join(HERE, "transpose_cases.py"), *args], env=env,
                           capture_output=True, text=True, timeout=timeout)
        out, err, rc = r.stdout, r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, rc = "timeout", -1
    rows, copy = {}, float("nan")
    for line in out.splitlines():
        if line.startswith("ROW "):
            f = line[4:].split("|")
            rows[f"{f[0]}@{f[1]}"] = (float(f[2]), float(f[3]), f[4] == "1", float(f[5]))
        elif line.startswith("COPY "):
            copy = float(line[5:])
    print(f"-- {tag} (JK_TRANSPOSE_TIERS={knob!r}) rc={rc} {time.time() - t0:.0f}s {len(rows)} cases",
          flush=True)
    if rc != 0:
        print(err[-1500:])
    return rows, copy


def main():
    deadline = time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 1e9)
    results, ceiling = {}, float("nan")
    for tag, knob, cases, args in RUNS:
        left = deadline - time.time()
        if left < 25:
            print(f"-- {tag}: skipped ({left:.0f}s left)")
            continue
        rows, copy = run(tag, knob, cases, args, timeout=left - 5)
        results[tag] = rows
        if tag == "default":
            ceiling = copy
    base = results.get("default", {})
    tags = [t for t, *_ in RUNS if t in results]
    keys = list(base) or sorted({k for r in results.values() for k in r})
    print(f"\ncopy ceiling {ceiling:.0f} GB/s. Per cell: ours us / ratio (jnp/ours, same process) / %copy")
    print(f"{'case':34s} {'MB':>6s} {'copy us':>8s} {'jnp us':>7s}  " + "  ".join(f"{t:>22s}" for t in tags))
    for k in keys:
        name, dt = k.split("@")
        shape = [int(v) for v in name.split()[0].split("x")]
        nbytes = 2 * math.prod(shape) * {"float32": 4, "bfloat16": 2, "int8": 1}[dt]
        b = base.get(k)
        cells = []
        for t in tags:
            v = results[t].get(k)
            if v is None:
                cells.append(f"{'-':>22s}")
                continue
            ours, theirs, ok, _ = v
            pct = 100 * nbytes / (ours * 1e-6) / 1e9 / ceiling
            cells.append(f"{ours:8.2f} {theirs / ours:5.3f} {pct:5.1f}%" + ("" if ok else "!") )
        copy_us = f"{b[3]:8.2f}" if b else f"{'-':>8s}"
        jnp_us = f"{b[1]:7.2f}" if b else f"{'-':>7s}"
        print(f"{k:34s} {nbytes / 1e6:6.1f} {copy_us} {jnp_us}  " + "  ".join(cells))
    print("(! = result differs from jnp / NumPy)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
