"""PNG figures from a results dict (matplotlib, imported lazily; `pip install matplotlib`).

- bandwidth_<op>.png and bandwidth_norm_softmax.png: effective GB/s against row length for the norm and
  softmax sweeps, one line per implementation and dtype, the measured copy ceiling drawn (the OneFlow chart);
- transpose_bandwidth.png: GB/s per transpose case, ours against jnp, with the copy ceiling;
- matmul_tflops.png: TFLOP/s per matmul/linear case, ours against jnp.
"""
from __future__ import annotations

import os

from .report import pairs

SWEEP_OPS = ("layer_norm", "rms_norm", "softmax", "log_softmax")
DTYPE_COLORS = {"float32": "tab:blue", "bfloat16": "tab:orange", "float16": "tab:green", "int8": "tab:purple"}
IMPL_STYLE = {"jax_kernels": dict(linestyle="-", marker="o", label="jax-kernels"),
              "jnp": dict(linestyle="--", marker="x", label="jnp (XLA)")}


def _pyplot():
    try:
        import matplotlib
    except ImportError as e:
        raise RuntimeError("--plot-dir needs matplotlib: pip install matplotlib "
                           "(or pip install 'jax-kernels[bench]')") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _device_title(meta):
    dev = meta.get("device", {})
    return f"{dev.get('kind', '?')}" + ("" if dev.get("backend") == "gpu" else " (CPU host timer)")


def _draw_sweep(ax, rows, op, ceiling):
    data = {}
    for r in rows:
        if r["op"] == op and r.get("sweep_cols") and r.get("gbps"):
            data.setdefault((r["impl"], r["dtype"]), []).append((r["sweep_cols"], r["gbps"]))
    if not data:
        return False
    for (impl, dtype), pts in sorted(data.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        pts.sort()
        style = IMPL_STYLE.get(impl, {})
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=DTYPE_COLORS.get(dtype, "gray"),
                linestyle=style.get("linestyle", "-"), marker=style.get("marker", "."), markersize=5,
                linewidth=1.6, label=f"{style.get('label', impl)} {dtype}")
    if ceiling:
        ax.axhline(ceiling, color="black", linestyle=":", linewidth=1.5, label=f"copy ceiling {ceiling:.0f} GB/s")
    cols = sorted({p[0] for pts in data.values() for p in pts})
    ax.set_xscale("log", base=2)
    ax.set_xticks(cols)
    ax.set_xticklabels([str(c) for c in cols], rotation=45)
    ax.set_xlabel("row length (columns)")
    ax.set_ylabel("effective bandwidth (GB/s)")
    top = max([ceiling or 0.0] + [p[1] for pts in data.values() for p in pts])
    ax.set_ylim(0, 1.08 * top)
    ax.grid(True, alpha=0.3)
    ax.set_title(op)
    return True


def _barh(ax, ps, value_key, ceiling=None, unit=""):
    import numpy as np
    labels, ours, base = [], [], []
    for m, b in ps:
        r = m or b
        labels.append(f"{r['op'] if r['group'] == 'matmul' else ''} {r['dtype']} {r['case']}".strip())
        ours.append((m or {}).get(value_key) or 0.0)
        base.append((b or {}).get(value_key) or 0.0)
    y = np.arange(len(labels))
    h = 0.38
    ax.barh(y - h / 2, ours, h, color="tab:blue", label="jax-kernels")
    ax.barh(y + h / 2, base, h, color="tab:gray", label="jnp (XLA)")
    top = max(ours + base + [ceiling or 0.0]) or 1.0
    for i, (m, _) in enumerate(ps):
        ratio = (m or {}).get("ratio")
        txt = f"{ratio:.2f}x" if ratio else ("error" if (m or {}).get("error") else "")
        ax.text(ours[i] + 0.01 * top, y[i] - h / 2, txt, va="center", fontsize=8)
    if ceiling:
        ax.axvline(ceiling, color="black", linestyle=":", linewidth=1.5, label=f"copy ceiling {ceiling:.0f} GB/s")
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, top * 1.15)
    ax.set_xlabel(unit)
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)


def write_plots(results, out_dir) -> list[str]:
    plt = _pyplot()
    os.makedirs(out_dir, exist_ok=True)
    meta, rows = results.get("meta", {}), results.get("rows", [])
    ceiling = meta.get("copy_ceiling_gbps")
    title = _device_title(meta)
    written = []

    def save(fig, name):
        path = os.path.join(out_dir, name)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)

    present = [op for op in SWEEP_OPS if any(r["op"] == op and r.get("sweep_cols") and r.get("gbps")
                                              for r in rows)]
    for op in present:
        fig, ax = plt.subplots(figsize=(10.5, 5))
        _draw_sweep(ax, rows, op, ceiling)
        ax.set_title(f"{op}: effective bandwidth vs row length -- {title}")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        save(fig, f"bandwidth_{op}.png")
    if len(present) > 1:
        n = len(present)
        ncol = 2
        nrow = (n + 1) // 2
        fig, axes = plt.subplots(nrow, ncol, figsize=(13, 4.6 * nrow), squeeze=False)
        for ax, op in zip(axes.flat, present):
            _draw_sweep(ax, rows, op, ceiling)
        for ax in list(axes.flat)[n:]:
            ax.axis("off")
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
        fig.suptitle(f"Norms and softmax: effective bandwidth vs row length -- {title}")
        fig.tight_layout(rect=(0, 0.07, 1, 0.97))
        path = os.path.join(out_dir, "bandwidth_norm_softmax.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)

    grouped = {}
    for m, b in pairs(rows):
        grouped.setdefault((m or b)["group"], []).append((m, b))
    if grouped.get("transpose"):
        ps = grouped["transpose"]
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(ps) + 1.6))
        _barh(ax, ps, "gbps", ceiling, "effective bandwidth (GB/s)")
        ax.set_title(f"transpose: bandwidth per case -- {title}")
        save(fig, "transpose_bandwidth.png")
    if grouped.get("matmul"):
        ps = grouped["matmul"]
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(ps) + 1.6))
        _barh(ax, ps, "tflops", None, "TFLOP/s (2*M*N*K / time)")
        ax.set_title(f"matmul / linear: TFLOP/s per case -- {title}")
        save(fig, "matmul_tflops.png")
    return written
