"""Sharded benchmark: ours vs jnp under the same input sharding on a 1-D mesh over every visible device.

Cases (issue #8): LayerNorm / RMSNorm with the normalised (hidden) axis sharded, where each device
reduces its slice and an all-reduce combines per-row statistics; LayerNorm and (log-)softmax with the
rows sharded (no collective expected); softmax with its axis sharded. Both implementations run inside
``jax.jit`` with the same committed input shardings; the output sharding is left to each one (ours: the
op's partitioning rule; jnp: XLA's propagation).

Timing is wall clock of the whole sharded step, not CUPTI: a kernel-time sum over several devices
counts every device's kernels (and the time collectives spend waiting for the other device), which is
no one's latency. Two figures per implementation, both medians after warm-up calls:
- per call: ``block_until_ready(f(*args))`` around each call (includes host dispatch and the sync);
- pipelined: K calls dispatched back to back, one ``block_until_ready``, divided by K (dispatch overlaps
  the previous step, so this is the device-bound figure when a step takes longer than its dispatch).
Errors: max |y - y64| / max |y64| over a sample of rows, against float64 NumPy on the unsharded rows.
Collectives: counted in ``jax.jit(f).lower(*args).compile().as_text()`` of each implementation.
"""
from __future__ import annotations

import re
import statistics
import time
import traceback
import zlib
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from . import report
from .cases import DTYPES

AXIS = "d"
COLLECTIVES = ("all-gather", "all-reduce", "reduce-scatter", "collective-permute", "all-to-all")
IMPLS = ("jax_kernels", "jnp")
SAMPLE_ROWS = 64
PIPELINE_CALLS = 10

METHOD = (
    "Wall clock of one jitted sharded step (all devices), median over N calls after 3 warm-up calls: "
    "'per call' syncs (block_until_ready) after every call, so it includes host dispatch; 'pipelined' "
    f"dispatches {PIPELINE_CALLS} calls back to back and syncs once (median over N such batches), the "
    "device-bound figure when a step outlasts its dispatch. Not CUPTI: a kernel-time sum over several devices adds "
    "up every device's kernels and the time collectives wait. Both implementations get the same committed "
    "input shardings on a 1-D mesh over all devices; output shardings are left to each implementation. "
    "GB/s = global bytes (inputs read once + outputs written once) / pipelined time, summed over devices. "
    "max rel err = max |y - y64| / max |y64| over sampled rows, y64 = float64 NumPy on the unsharded rows. "
    "Collectives are counted in the compiled HLO (jit(f).lower(...).compile().as_text()). Random normal inputs.")


@dataclass(frozen=True)
class ShardedCase:
    op: str          # layer_norm | rms_norm | softmax | log_softmax
    dtype: str
    shape: tuple[int, int]
    layout: str      # "hidden": the op's axis (last) sharded; "rows": the first axis sharded

    @property
    def x_spec(self):
        return (None, AXIS) if self.layout == "hidden" else (AXIS, None)

    @property
    def param_spec(self):  # scale / bias follow the hidden axis
        return (AXIS,) if self.layout == "hidden" else (None,)

    @property
    def n_params(self) -> int:
        return {"layer_norm": 2, "rms_norm": 1}.get(self.op, 0)

    @property
    def label(self) -> str:
        return f"{self.shape[0]}x{self.shape[1]} {_spec_str(self.x_spec)}"


def _spec_str(spec) -> str:
    return "P(" + ", ".join("None" if s is None else repr(s) for s in spec) + ")"


def default_cases() -> list[ShardedCase]:
    norm, wide, sm = (16384, 16384), (16384, 65536), (32768, 8192)
    return [
        ShardedCase("layer_norm", "bfloat16", norm, "hidden"),
        ShardedCase("layer_norm", "float32", norm, "hidden"),
        ShardedCase("layer_norm", "bfloat16", wide, "hidden"),
        ShardedCase("rms_norm", "bfloat16", norm, "hidden"),
        ShardedCase("layer_norm", "bfloat16", norm, "rows"),
        ShardedCase("softmax", "bfloat16", sm, "rows"),
        ShardedCase("softmax", "float32", sm, "rows"),
        ShardedCase("log_softmax", "bfloat16", sm, "rows"),
        ShardedCase("softmax", "bfloat16", sm, "hidden"),
    ]


def quick_cases() -> list[ShardedCase]:
    """The same cases at sizes a CPU runs in seconds (every dim divisible by 8 devices)."""
    small = {(16384, 65536): (64, 1024), (16384, 16384): (64, 256), (32768, 8192): (128, 256)}
    return [ShardedCase(c.op, c.dtype, small[c.shape], c.layout) for c in default_cases()]


def select(quick: bool, ops=None, dtypes=None) -> list[ShardedCase]:
    cs = quick_cases() if quick else default_cases()
    return [c for c in cs if (not ops or c.op in ops) and (not dtypes or c.dtype in dtypes)]


# ---------------------------------------------------------------------------------------- pieces

def count_collectives(hlo_text: str) -> dict:
    """Collective ops in compiled HLO text (async pairs count once, at their -start)."""
    return {c: len(re.findall(rf"\b{c}(?:-start)?\(", hlo_text)) for c in COLLECTIVES}


def make_mesh(devices):
    return jax.make_mesh((len(devices),), (AXIS,), axis_types=(jax.sharding.AxisType.Auto,),
                         devices=devices)


def _named(mesh, spec):
    from jax.sharding import NamedSharding, PartitionSpec
    return NamedSharding(mesh, PartitionSpec(*spec))


def _inputs(case: ShardedCase, mesh, seed: int):
    """x and the parameters, generated on the devices directly into their shardings."""
    dtype = DTYPES[case.dtype]
    rows, cols = case.shape
    key = jax.random.fold_in(jax.random.key(seed), zlib.crc32(repr((case.op, case.dtype, case.shape)).encode()) >> 1)
    scale = 3.0 if "softmax" in case.op else 1.0

    def gen(k, shape, spec, loc=0.0, s=1.0):
        f = jax.jit(lambda k: (jax.random.normal(k, shape, jnp.float32) * s + loc).astype(dtype),
                    out_shardings=_named(mesh, spec))
        return f(k)

    keys = jax.random.split(key, 3)
    x = gen(keys[0], (rows, cols), case.x_spec, s=scale)
    params = [gen(keys[1], (cols,), case.param_spec, loc=1.0, s=0.5),
              gen(keys[2], (cols,), case.param_spec, s=0.5)][:case.n_params]
    return (x, *params)


def _reference64(case: ShardedCase, x, params):
    """float64 NumPy result on the (unsharded) rows of x."""
    if case.op == "layer_norm":
        mean = x.mean(-1, keepdims=True)
        var = np.square(x - mean).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * params[0] + params[1]
    if case.op == "rms_norm":
        return x / np.sqrt(np.square(x).mean(-1, keepdims=True) + 1e-6) * params[0]
    z = x - x.max(-1, keepdims=True)
    if case.op == "softmax":
        e = np.exp(z)
        return e / e.sum(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def _host64(a) -> np.ndarray:
    return np.asarray(jnp.asarray(a).astype(jnp.float32), dtype=np.float64)


def _rel_err(y, want) -> float:
    scale = max(float(np.abs(want).max()), float(np.finfo(np.float32).tiny))
    return float(np.abs(y - want).max() / scale)


def _wall_ms(f, args, iterations: int) -> tuple[float, float]:
    """(median ms per synced call, median ms per call of pipelined batches)."""
    for _ in range(3):
        jax.block_until_ready(f(*args))
    synced = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        synced.append((time.perf_counter() - t0) * 1e3)
    batches = []
    for _ in range(max(3, iterations)):
        out = None
        t0 = time.perf_counter()
        for _ in range(PIPELINE_CALLS):
            out = f(*args)
        jax.block_until_ready(out)
        batches.append((time.perf_counter() - t0) * 1e3 / PIPELINE_CALLS)
        del out
    return float(statistics.median(synced)), float(statistics.median(batches))


def _spec_of(a) -> list:
    spec = getattr(a.sharding, "spec", None)
    if spec is None:  # not a NamedSharding (e.g. a single-device result)
        return [str(a.sharding)]
    spec = list(spec) + [None] * (a.ndim - len(spec))
    return [s if s is None or isinstance(s, str) else list(s) for s in spec]


def _row(case: ShardedCase, impl: str, n_dev: int) -> dict:
    nbytes = 2 * case.shape[0] * case.shape[1] * np.dtype(DTYPES[case.dtype]).itemsize
    nbytes += case.n_params * case.shape[1] * np.dtype(DTYPES[case.dtype]).itemsize
    return dict(op=case.op, impl=impl, dtype=case.dtype, shape=list(case.shape), case=case.label,
                layout=case.layout, x_spec=list(case.x_spec), param_spec=list(case.param_spec) if case.n_params
                else None, devices=n_dev, bytes=nbytes, timer="wall", time_ms=None, pipelined_ms=None,
                iterations=None, gbps=None, ratio=None, ratio_pipelined=None, max_rel_err=None,
                collectives=None, all_gathers=None, gathers_data=None, out_spec=None, error=None)


def run_case(case: ShardedCase, mesh, iterations: int, seed: int = 0, debug: bool = False) -> list[dict]:
    import jax_kernels as ours
    from .. import reference
    n_dev = mesh.devices.size
    rows = {impl: _row(case, impl, n_dev) for impl in IMPLS}
    try:
        args = _inputs(case, mesh, seed)
    except Exception as e:  # noqa: BLE001 - the case is recorded as failed, the run goes on
        for r in rows.values():
            r["error"] = _error_text(e, debug)
        return list(rows.values())
    idx = np.unique(np.linspace(0, case.shape[0] - 1, min(SAMPLE_ROWS, case.shape[0])).astype(np.int64))
    x_rows = _host64(jnp.take(args[0], jnp.asarray(idx), axis=0))
    want = _reference64(case, x_rows, [_host64(p) for p in args[1:]])
    for impl, ns in zip(IMPLS, (ours, reference)):
        r = rows[impl]
        fn = getattr(ns, case.op)
        try:
            compiled = jax.jit(lambda *a, fn=fn: fn(*a)).lower(*args).compile()
            coll = count_collectives(compiled.as_text())
            r.update(collectives=coll, all_gathers=coll["all-gather"], gathers_data=coll["all-gather"] > 0)
            out = compiled(*args)
            r["out_spec"] = _spec_of(out)
            r["max_rel_err"] = _rel_err(_host64(jnp.take(out, jnp.asarray(idx), axis=0)), want)
            del out
            r["time_ms"], r["pipelined_ms"] = _wall_ms(compiled, args, iterations)
            r["iterations"] = iterations
            r["gbps"] = r["bytes"] / (r["pipelined_ms"] * 1e-3) / 1e9
        except Exception as e:  # noqa: BLE001
            r["error"] = _error_text(e, debug)
    mine, base = rows["jax_kernels"], rows["jnp"]
    if mine["time_ms"] and base["time_ms"]:
        mine["ratio"] = base["time_ms"] / mine["time_ms"]
        mine["ratio_pipelined"] = base["pipelined_ms"] / mine["pipelined_ms"]
    return list(rows.values())


def _error_text(e: BaseException, debug: bool) -> str:
    if debug:
        traceback.print_exception(e)
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    return f"{type(e).__name__}: {lines[0][:300] if lines else ''}"


def run(cases, devices, iterations: int, seed: int = 0, debug: bool = False, log=print, rows=None,
        on_case=None) -> list[dict]:
    """Runs `cases` on a 1-D mesh over `devices`, appending two rows per case to `rows` (returned);
    `on_case(rows)` after each case (a run cut short keeps what it finished)."""
    mesh = make_mesh(devices)
    rows = [] if rows is None else rows
    for i, case in enumerate(cases):
        t0 = time.perf_counter()
        case_rows = run_case(case, mesh, iterations, seed=seed, debug=debug)
        rows += case_rows
        m = case_rows[0]
        status = m["error"] or case_rows[1]["error"] or (
            f"ours {m['pipelined_ms']:.4f} ms, ratio {m['ratio_pipelined']:.2f}x" if m["ratio_pipelined"] else "")
        log(f"[{i + 1}/{len(cases)}] {case.op} {case.dtype} {case.label}: {status} ({time.perf_counter() - t0:.1f}s)")
        if on_case is not None:
            on_case(rows)
    return rows


# ---------------------------------------------------------------------------------------- formats

def _coll_str(c) -> str:
    if not c:
        return "-"
    short = {"all-gather": "AG", "all-reduce": "AR", "reduce-scatter": "RS", "collective-permute": "CP",
             "all-to-all": "A2A"}
    parts = [f"{n} {short[k]}" for k, n in c.items() if n]
    return ", ".join(parts) or "none"


def _f(x, fmt):
    return "-" if x is None else format(x, fmt)


COLUMNS = ["op", "dtype", "shape", "x sharding", "out sharding", "ours ms", "jnp ms", "ratio", "ours pipe ms",
           "jnp pipe ms", "ratio pipe", "ours GB/s", "ours err", "jnp err", "ours collectives",
           "jnp collectives"]


def _cells(mine, base) -> list[str]:
    r = mine or base
    m, b = mine or {}, base or {}
    out = _spec_str(m["out_spec"]) if m.get("out_spec") else "-"
    if b.get("out_spec") and b["out_spec"] != m.get("out_spec"):
        out += f" (jnp {_spec_str(b['out_spec'])})"
    return [r["op"], r["dtype"], "x".join(map(str, r["shape"])), _spec_str(r["x_spec"]), out,
            _f(m.get("time_ms"), ".4f"), _f(b.get("time_ms"), ".4f"),
            _f(m.get("ratio"), ".2f") + ("x" if m.get("ratio") else ""),
            _f(m.get("pipelined_ms"), ".4f"), _f(b.get("pipelined_ms"), ".4f"),
            _f(m.get("ratio_pipelined"), ".2f") + ("x" if m.get("ratio_pipelined") else ""),
            report._num(m.get("gbps")), _f(m.get("max_rel_err"), ".1e"), _f(b.get("max_rel_err"), ".1e"),
            _coll_str(m.get("collectives")), _coll_str(b.get("collectives"))]


def _errors(ps) -> list[str]:
    return [f"{(m or b)['op']} {(m or b)['dtype']} {(m or b)['case']} {name}: {r['error']}"
            for m, b in ps for name, r in (("ours", m), ("jnp", b)) if r and r.get("error")]


def _verdict(rows) -> str:
    mine = [r for r in rows if r["impl"] == "jax_kernels" and r.get("collectives")]
    gathers = sum(r["all_gathers"] for r in mine)
    return (f"ours: {gathers} all-gather(s) over {len(mine)} compiled cases"
            + (" (none: the data is never gathered)" if gathers == 0 else " -- UNEXPECTED, see the table"))


def _header(meta) -> list[str]:
    kinds = ", ".join(meta.get("device_kinds") or [])
    return report.header_lines(meta) + [f"mesh: {meta.get('mesh')} over {meta.get('n_devices')} devices ({kinds}); "
                                        "wall clock of the whole sharded step"]


def format_table(results) -> str:
    rows, meta = results["sharded"], results.get("meta", {})
    ps = report.pairs(rows)
    table = [COLUMNS] + [_cells(m, b) for m, b in ps]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(COLUMNS))]
    out = _header(meta) + [""]
    for k, row in enumerate(table):
        out.append("  ".join(str(c).rjust(w) if k and 5 <= i <= 13 else str(c).ljust(w)
                             for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    out += ["  ! " + e for e in _errors(ps)]
    out += ["", "ratio = jnp time / ours (> 1: ours faster); AR all-reduce, AG all-gather, RS reduce-scatter, "
            "CP collective-permute, A2A all-to-all", _verdict(rows)]
    return "\n".join(out)


def to_markdown(results) -> str:
    rows, meta = results["sharded"], results.get("meta", {})
    ps = report.pairs(rows)
    out = ["_" + "; ".join(_header(meta)) + "_", "",
           "| " + " | ".join(COLUMNS) + " |",
           "|" + "|".join("---" if i < 5 or i >= 14 else "---:" for i in range(len(COLUMNS))) + "|"]
    out += ["| " + " | ".join(c.replace("|", "/") for c in _cells(m, b)) + " |" for m, b in ps]
    errs = _errors(ps)
    if errs:
        out += [""] + [f"- error: {e}" for e in errs]
    out += ["", "ratio = jnp time / ours (> 1: ours faster). " + _verdict(rows) + ".",
            "", "Method: " + " ".join(meta.get("method", METHOD).split())]
    return "\n".join(out)
