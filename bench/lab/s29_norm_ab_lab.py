"""Session 29: one process of the A/B norm lab (bench/lab/s29_ab.sh runs it alternately against two installs).
The benchmark's own cases, runner and timer (CUPTI median of 10 calls, parameters as jit arguments, ours and jnp
alternating who runs first) at the short rows of issue 3's sweep: 49152 x 32 / 64 / 128 / 256, LayerNorm and RMSNorm,
float32 / bfloat16 / float16. Prints one line per case: TAG op dtype cols ours_us jnp_us.

  PYTHONPATH=/tmp/A python bench/lab/s29_norm_ab_lab.py A
"""
import sys

import jax_kernels as ours
from jax_kernels import reference
from jax_kernels._bench import cases, runner, timing

tag = sys.argv[1] if len(sys.argv) > 1 else "?"
device = timing.describe_device()
timer = timing.Timer(device, 10, min_time_s=0.25)
selected = [cases.norm_softmax_case(op, dt, (49152, n), tags=("sweep",))
            for op in ("layer_norm", "rms_norm") for dt in ("float32", "bfloat16", "float16") for n in (32, 64, 128, 256)]
rows = runner.run_cases(selected, ours, reference, timer, ceiling_gbps=1.0, device=device.kind, progress=False)
by = {}
for r in rows:
    by.setdefault((r["op"], r["dtype"], r["sweep_cols"]), {})[r["impl"]] = r
print(f"# {tag}: {ours.__file__} on {device.kind}")
for (op, dt, n), d in by.items():
    o, j = d.get("jax_kernels", {}), d.get("jnp", {})
    if o.get("error") or j.get("error"):
        print(f"{tag} {op} {dt} {n} ERROR {o.get('error') or j.get('error')}")
        continue
    print(f"{tag} {op} {dt} {n} {o['time_ms'] * 1e3:.3f} {j['time_ms'] * 1e3:.3f}", flush=True)
