"""Before/after for issue 5's cases in one build: runs bench/lab/transpose_cases.py once per
JK_TRANSPOSE_TIERS setting (one process each; since session 4 the launcher re-reads the knob at every
launch and bench/lab/transpose_s4.py times every setting in one process) and prints one table.

  old      the session-1 dispatch: general 64-bit kernels only (the figures in results.md)
  ''       the current dispatch (compact 32-bit kernels up to 32 MiB where they apply)
  compact  the compact kernels at every size they allow

  python3 transpose_before_after.py [TAG ...]   (default: all three)
The first run (bench/lab/transpose_results_h200.md) also timed three tile variants of the small
cases, since removed from the launcher: all slower than the default table.

Every process times jnp in the same process too; `ratio` = jnp time / ours of that process. Same
method as transpose_cases.py (CUPTI kernel time, median of 20, better of two alternated rounds).
"""
from __future__ import annotations

import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SMALL = {("2048x512", "float32"), ("2048x512", "bfloat16"), ("2048x512", "int8"), ("4097x1023", "float32"),
         ("8x16x32x64x2 (4,0,3,1,2)", "float32")}  # under the 50 MB L2: latency-bound
RUNS = [("old", "old", []), ("new", "", []), ("compact", "compact", [])]


def run(tag, knob, args):
    env = dict(os.environ, JK_TRANSPOSE_TIERS=knob)
    r = subprocess.run([sys.executable, os.path.join(HERE, "transpose_cases.py"), *args], env=env,
                       capture_output=True, text=True, timeout=240)
    rows = {}
    for line in r.stdout.splitlines():
        if line.startswith("ROW "):
            name, dt, ours, theirs, ok = line[4:].split("|")[:5]
            rows[(name, dt)] = (float(ours), float(theirs), ok == "1")
    tail = [l for l in r.stdout.splitlines() if not l.startswith("ROW ")]
    print(f"---- {tag} (JK_TRANSPOSE_TIERS={knob!r}) rc={r.returncode}")
    print("\n".join(tail[-18:]))
    if r.returncode != 0:
        print(r.stderr[-3000:])
    return rows


def main():
    only = sys.argv[1:] or [t for t, _, _ in RUNS]
    results = {tag: run(tag, knob, args) for tag, knob, args in RUNS if tag in only}
    keys = list(results.get("new") or results.get("old") or {})
    tags = [t for t, _, _ in RUNS if t in results]
    print("\n== before/after (us; ratio = jnp / ours in the same process)")
    print(f"{'case':26s} {'dtype':8s} " + " ".join(f"{t + ' us':>9s} {'jnp':>7s} {'ratio':>6s}" for t in tags))
    geo = {t: [] for t in tags}
    for k in keys:
        cells = []
        for t in tags:
            v = results[t].get(k)
            if v is None:
                cells.append(f"{'-':>9s} {'-':>7s} {'-':>6s}")
                continue
            ours, theirs, ok = v
            geo[t].append(theirs / ours)
            cells.append(f"{ours:9.2f} {theirs:7.2f} {theirs / ours:6.3f}" + ("" if ok else "!WRONG"))
        print(f"{k[0]:26s} {k[1]:8s} " + " ".join(cells))
    small = {k for k in keys if k in SMALL}
    for t in tags:
        g = [results[t][k][1] / results[t][k][0] for k in keys if k in small and k in results[t]]
        if g:
            print(f"geomean {t} over the {len(g)} small cases: {math.exp(sum(map(math.log, g)) / len(g)):.3f}")
    for t in tags:
        g = geo[t]
        if g:
            print(f"geomean {t}: {math.exp(sum(map(math.log, g)) / len(g)):.3f} over {len(g)} cases, "
                  f"min {min(g):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
