"""Results: the JSON file, the terminal table, the markdown tables for README, speedup summaries."""
from __future__ import annotations

import json
import math
from collections import OrderedDict

GROUP_TITLES = OrderedDict([
    ("norm", "LayerNorm / RMSNorm"),
    ("softmax", "softmax / log-softmax"),
    ("transpose", "transpose"),
    ("matmul", "matmul / linear"),
])


def pairs(rows):
    """[(ours_row, jnp_row)] per case, in run order (either may be None if missing)."""
    by_case = OrderedDict()
    for r in rows:
        key = (r["op"], r["dtype"], r["case"])
        by_case.setdefault(key, {})[r["impl"]] = r
    return [(d.get("jax_kernels"), d.get("jnp")) for d in by_case.values()]


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summary(rows):
    """Per op: cases, cases with both timings, geometric-mean and minimum ratio (jnp time / ours) over all
    its cases and over the sweep cases alone, the lowest fraction of the copy ceiling ours reaches on
    cases moving more than 100 MB (the issues' figure), and the number of cases with errors. Cases tagged
    "ragged" are summarised apart, as "<op> (ragged)"."""
    out = OrderedDict()
    for mine, base in pairs(rows):
        r = mine or base
        # Cases beyond the issues' lists (tagged "ragged": session 37's ragged transposes) get a line of their own,
        # so the op's line keeps the issue's figures.
        key = r["op"] + (" (ragged)" if "ragged" in (r.get("tags") or []) else "")
        s = out.setdefault(key, dict(cases=0, timed=0, errors=0, ratios=[], sweep=[], big=[]))
        s["cases"] += 1
        if mine and mine.get("ratio"):
            s["timed"] += 1
            s["ratios"].append(mine["ratio"])
            if "sweep" in (mine.get("tags") or []):
                s["sweep"].append(mine["ratio"])
        if mine and mine.get("frac_ceiling") is not None and (mine.get("bytes") or 0) > 100e6:
            s["big"].append(mine["frac_ceiling"])
        if any(x and x.get("error") for x in (mine, base)):
            s["errors"] += 1
    for s in out.values():
        rs, sw, big = s.pop("ratios"), s.pop("sweep"), s.pop("big")
        s["geomean_ratio"] = geomean(rs)
        s["min_ratio"] = min(rs) if rs else None
        s["sweep_geomean_ratio"] = geomean(sw)
        s["min_frac_ceiling_over_100MB"] = min(big) if big else None
    return out


# ----------------------------------------------------------------------------------------- formats

def _f(x, fmt, missing="-"):
    return missing if x is None else format(x, fmt)


def _num(x):
    """3 significant digits below 100, integers above (GB/s and TFLOP/s span 0.01 to 4000)."""
    if x is None:
        return "-"
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _pct(x):
    return "-" if x is None else f"{100 * x:.0f}%"


def _err(mine, base):
    errs = [f"{name}: {r['error']}" for name, r in (("ours", mine), ("jnp", base)) if r and r.get("error")]
    return "; ".join(errs)


def _columns(group):
    if group == "matmul":
        return ["op", "dtype", "case", "ours ms", "jnp ms", "ours TFLOP/s", "jnp TFLOP/s", "ratio",
                "max rel err"]
    return ["op", "dtype", "case", "ours ms", "jnp ms", "ours GB/s", "jnp GB/s", "ours %copy",
            "jnp %copy", "ratio", "max rel err"]


def _cells(group, mine, base):
    r = mine or base
    m, b = mine or {}, base or {}
    warm = " (L2)" if r.get("l2_warm") else ""
    cells = [r["op"], r["dtype"], r["case"] + warm, _f(m.get("time_ms"), ".4f"), _f(b.get("time_ms"), ".4f")]
    if group == "matmul":
        cells += [_num(m.get("tflops")), _num(b.get("tflops"))]
    else:
        cells += [_num(m.get("gbps")), _num(b.get("gbps")), _pct(m.get("frac_ceiling")),
                  _pct(b.get("frac_ceiling"))]
    cells += [_f(m.get("ratio"), ".2f") + ("x" if m.get("ratio") else ""), _f(m.get("max_rel_err"), ".1e")]
    return cells


def _grouped(rows):
    groups = OrderedDict((g, []) for g in GROUP_TITLES)
    for mine, base in pairs(rows):
        groups.setdefault((mine or base)["group"], []).append((mine, base))
    return [(g, ps) for g, ps in groups.items() if ps]


def header_lines(meta):
    dev = meta.get("device", {})
    v = meta.get("versions", {})
    ceil = meta.get("copy_ceiling_gbps")
    lines = [f"device: {dev.get('kind')} ({dev.get('backend')}, {dev.get('platform_version')}); "
             f"timer: {meta.get('timer')}; mode: {meta.get('mode')}",
             f"versions: jax {v.get('jax')}, jaxlib {v.get('jaxlib')}, jax-kernels {v.get('jax_kernels')}"]
    if ceil:
        lines.append(f"copy ceiling (x*c over {meta.get('copy_bytes', 0) / 2**20:.0f} MiB): {ceil:.0f} GB/s")
    return lines


def format_table(rows, meta) -> str:
    out = header_lines(meta)
    for group, ps in _grouped(rows):
        cols = _columns(group)
        table = [cols] + [_cells(group, m, b) for m, b in ps]
        widths = [max(len(str(row[i])) for row in table) for i in range(len(cols))]
        out.append("")
        out.append(f"== {GROUP_TITLES.get(group, group)}")
        for k, row in enumerate(table):
            out.append("  ".join(str(c).rjust(w) if k and i >= 3 else str(c).ljust(w)
                                 for i, (c, w) in enumerate(zip(row, widths))).rstrip())
        errors = [(m or b, _err(m, b)) for m, b in ps if _err(m, b)]
        for r, e in errors:
            out.append(f"  ! {r['op']} {r['dtype']} {r['case']}: {e}")
    out.append("")
    out.append("ratio = jnp time / ours (> 1: ours faster); (L2): inputs+outputs under 2x L2, may be L2-served")
    for op, s in summary(rows).items():
        line = (f"{op:12s} {s['timed']}/{s['cases']} timed, geomean ratio {_f(s['geomean_ratio'], '.2f')}x, "
                f"min {_f(s['min_ratio'], '.2f')}x")
        if s["sweep_geomean_ratio"] is not None:
            line += f", sweep geomean {s['sweep_geomean_ratio']:.2f}x"
        if s["min_frac_ceiling_over_100MB"] is not None:
            line += f", min {_pct(s['min_frac_ceiling_over_100MB'])} of copy ceiling over 100 MB"
        out.append(line + (f", {s['errors']} with errors" if s["errors"] else ""))
    return "\n".join(out)


def to_markdown(results) -> str:
    meta, rows = results.get("meta", {}), results.get("rows", [])
    if results.get("sharded"):
        from .sharded import to_markdown as sharded_markdown
        return sharded_markdown(results)
    out = ["_" + "; ".join(header_lines(meta)) + "_", ""]
    for group, ps in _grouped(rows):
        cols = _columns(group)
        out += [f"**{GROUP_TITLES.get(group, group)}**", "",
                "| " + " | ".join(cols) + " |", "|" + "|".join("---" if i < 3 else "---:" for i in range(len(cols))) + "|"]
        for m, b in ps:
            cells = _cells(group, m, b)
            e = _err(m, b)
            if e:
                cells[-1] = (cells[-1] + " " if cells[-1] != "-" else "") + "error: " + e.replace("|", "/")
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    s = summary(rows)
    if s:
        out += ["| op | cases timed | geomean ratio | min ratio | sweep geomean | min %copy (> 100 MB) |",
                "|---|---:|---:|---:|---:|---:|"]
        for op, d in s.items():
            sw = d["sweep_geomean_ratio"]
            out.append(f"| {op} | {d['timed']}/{d['cases']} | {_f(d['geomean_ratio'], '.2f')}x | "
                       f"{_f(d['min_ratio'], '.2f')}x | {'-' if sw is None else f'{sw:.2f}x'} | "
                       f"{_pct(d['min_frac_ceiling_over_100MB'])} |")
        out.append("")
    if results.get("model"):
        out.append(model_markdown(results["model"]))
    if meta.get("method"):
        out += ["", "Method: " + " ".join(meta["method"].split())]
    return "\n".join(out)


def model_markdown(m) -> str:
    c = m["config"]
    lines = [f"**GPT decoder forward** ({c['layers']} layers, width {c['width']}, {c['heads']} heads, vocab "
             f"{c['vocab']}, {c['dtype']}, batch {m['batch']} x seq {m['seq']} = {m['tokens']} tokens; "
             f"{m['timer']})", "",
             "| impl | kernel ms / forward | kernel tokens/s | wall ms / forward | wall tokens/s |",
             "|---|---:|---:|---:|---:|"]
    for impl in ("jax_kernels", "jnp"):
        r = m["impls"].get(impl, {})
        lines.append(f"| {impl} | {_f(r.get('kernel_ms'), '.3f')} | {_f(r.get('kernel_tokens_per_s'), ',.0f')} | "
                     f"{_f(r.get('wall_ms'), '.3f')} | {_f(r.get('wall_tokens_per_s'), ',.0f')} |")
    def x(v):
        return "-" if v is None else f"{v:.3f}x"
    lines += ["", f"speedup (kernel time): {x(m.get('speedup_kernel'))}; speedup (wall): "
              f"{x(m.get('speedup_wall'))}; logits relative error (Frobenius) "
              f"{_f(m.get('logits_rel_err'), '.2e')}, max abs diff {_f(m.get('logits_max_abs_diff'), '.2e')}"]
    return "\n".join(lines)


def write_json(path, results):
    with open(path, "w") as f:
        json.dump(results, f, indent=1, default=_default)
        f.write("\n")


def _default(o):
    try:
        import numpy as np
        if isinstance(o, np.generic):
            return o.item()
    except ImportError:  # pragma: no cover
        pass
    return str(o)


def read_json(path):
    with open(path) as f:
        return json.load(f)
