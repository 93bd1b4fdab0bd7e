"""What the benchmark times: one `Case` per (op, dtype, shape, options), and the sweeps that list them.

A case is op-agnostic data: its inputs (shape, dtype, how to fill them), the static keyword arguments
both implementations get, and a label. `Case.call(ns, *arrays)` applies the op of namespace `ns`
(the `jax_kernels` package or `jax_kernels.reference`), so ours and the jnp baseline are written once.

The default sweeps are those of the speed issues (3: norms, 4: softmax, 5: transpose, 6: matmul);
`quick_cases` is a handful of small shapes per op for CI and smoke tests.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jax.numpy as jnp
from jax import lax

OPS = ("layer_norm", "rms_norm", "softmax", "log_softmax", "transpose", "matmul", "linear")
FLOAT_DTYPES = ("float32", "bfloat16", "float16")
DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16, "float16": jnp.float16, "int8": jnp.int8,
          "bool": jnp.bool_}
DTYPE_ALIASES = {"f32": "float32", "fp32": "float32", "bf16": "bfloat16", "f16": "float16",
                 "fp16": "float16", "half": "float16", "i8": "int8"}

# Issue 3/4 sweep: row lengths, and a row count that keeps every case well above L2 (>100 MB) from
# 512 columns on; 65536 columns halve the rows so one float32 tensor stays at 6.4 GB.
SWEEP_COLS = (32, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)


def sweep_rows(cols: int) -> int:
    return 24576 if cols >= 65536 else 49152


@dataclass(frozen=True)
class Input:
    name: str
    shape: tuple[int, ...]
    dtype: str
    fill: str = "normal"        # "normal" | "int" (uniform small ints) | "causal" (lower-triangular bool)
    keyword: str | None = None  # passed as this keyword argument instead of positionally

    @property
    def key(self):
        return (self.shape, self.dtype, self.fill, self.name)


@dataclass(frozen=True)
class Case:
    op: str
    dtype: str
    inputs: tuple[Input, ...]
    label: str                                  # the shape and options as tables show them
    group: str                                  # "norm" | "softmax" | "transpose" | "matmul"
    kwargs: tuple[tuple[str, Any], ...] = ()    # static keyword arguments for both implementations
    flops: int = 0                              # > 0: compute-bound, reported in TFLOP/s
    sweep_cols: int | None = None               # x coordinate of the bandwidth-vs-row-length plots
    tags: tuple[str, ...] = field(default=())   # e.g. ("sweep",), ("masked",), ("non-last-axis",)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.inputs[0].shape

    @property
    def memory_bound(self) -> bool:
        return self.flops == 0

    def call(self, ns, *arrays):
        pos = [a for a, i in zip(arrays, self.inputs) if i.keyword is None]
        kw = {i.keyword: a for a, i in zip(arrays, self.inputs) if i.keyword is not None}
        return getattr(ns, self.op)(*pos, **kw, **dict(self.kwargs))

    def params_json(self) -> dict[str, str]:
        return {k: _json_value(v) for k, v in self.kwargs}


def _json_value(v):
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    if isinstance(v, tuple):
        return [_json_value(x) for x in v]
    if isinstance(v, lax.Precision):
        return v.name
    return str(v)


def _x(shape, dtype):
    return Input("x", tuple(shape), dtype)


def norm_softmax_case(op: str, dtype: str, shape, *, axis: int = -1, masked: bool = False,
                      tags=()) -> Case:
    """layer_norm (x, scale, bias), rms_norm (x, scale), softmax/log_softmax (x[, where=mask])."""
    shape = tuple(shape)
    n = shape[axis]
    inputs = [_x(shape, dtype)]
    if op == "layer_norm":
        inputs += [Input("scale", (n,), dtype), Input("bias", (n,), dtype)]
    elif op == "rms_norm":
        inputs += [Input("scale", (n,), dtype)]
    elif masked:
        inputs += [Input("where", shape[-2:], "bool", fill="causal", keyword="where")]
    kwargs = (("axis", axis),) if axis != -1 else ()
    label = "x".join(map(str, shape))
    if axis not in (-1, len(shape) - 1):
        label += f" axis={axis}"
    if masked:
        label += " causal where="
    group = "norm" if op in ("layer_norm", "rms_norm") else "softmax"
    cols = shape[-1] if "sweep" in tags else None
    return Case(op, dtype, tuple(inputs), label, group, kwargs, sweep_cols=cols, tags=tuple(tags))


def transpose_case(dtype: str, shape, axes, tags=()) -> Case:
    shape, axes = tuple(shape), tuple(axes)
    fill = "int" if dtype == "int8" else "normal"
    label = "x".join(map(str, shape)) + " (" + ",".join(map(str, axes)) + ")"
    return Case("transpose", dtype, (Input("x", shape, dtype, fill),), label, "transpose",
                (("axes", axes),), tags=tuple(tags))


def matmul_case(dtype: str, m: int, n: int, k: int, *, precision=None, batch=()) -> Case:
    """`matmul(a, b)` with a: (*batch, M, K), b: (*batch, K, N); same `precision` on both sides."""
    batch = tuple(batch)
    a = Input("a", batch + (m, k), dtype)
    b = Input("b", batch + (k, n), dtype)
    size = 1
    for d in batch:
        size *= d
    label = ("x".join(map(str, batch)) + " " if batch else "") + f"M={m} N={n} K={k}"
    if precision is not None:
        label += f" {precision.name}"
    elif dtype == "float32":
        label += " DEFAULT"  # XLA may use TF32 on GPUs; ours gets the same precision
    return Case("matmul", dtype, (a, b), label, "matmul", (("precision", precision),),
                flops=2 * size * m * n * k)


def linear_case(dtype: str, m: int, n: int, k: int, *, activation="gelu", bias=True,
                residual=False) -> Case:
    """`linear(x, w, bias, activation=..., residual=r)` = act(x @ w + bias) + r, vs the jnp composition."""
    inputs = [Input("x", (m, k), dtype), Input("w", (k, n), dtype)]
    label = f"M={m} N={n} K={k}"
    if bias:
        inputs.append(Input("bias", (n,), dtype))
        label += " +bias"
    if activation:
        label += f" {activation}"
    if residual:
        inputs.append(Input("residual", (m, n), dtype, keyword="residual"))
        label += " +residual"
    return Case("linear", dtype, tuple(inputs), label, "matmul", (("activation", activation),),
                flops=2 * m * n * k)


# ------------------------------------------------------------------------------------------ sweeps

def _norm_softmax_sweep(cols_list, rows_fn, dtypes, ops):
    # Ops of one (cols, dtype) are adjacent so they share the generated input tensor.
    out = []
    for cols in cols_list:
        for dt in (d for d in dtypes if d in FLOAT_DTYPES):
            for op in ("layer_norm", "rms_norm", "softmax", "log_softmax"):
                if op in ops:
                    out.append(norm_softmax_case(op, dt, (rows_fn(cols), cols), tags=("sweep",)))
    return out


def _extra_norm_softmax(dtypes, ops, masked_shape, axis_shapes):
    out = []
    if "softmax" in ops and "bfloat16" in dtypes:  # issue 4: causal attention-score mask
        out.append(norm_softmax_case("softmax", "bfloat16", masked_shape, masked=True, tags=("masked",)))
    # Normalising a non-last axis (issues 3/4: a strided kernel, no transposes around it).
    dt = "bfloat16" if "bfloat16" in dtypes else next((d for d in dtypes if d in FLOAT_DTYPES), None)
    if dt is not None:
        for axis_shape in axis_shapes:
            for op in ("layer_norm", "rms_norm", "softmax"):
                if op in ops:
                    out.append(norm_softmax_case(op, dt, axis_shape, axis=1, tags=("non-last-axis",)))
    return out


def _transpose_cases(spec, dtypes, tags=()):
    return [transpose_case(dt, shape, axes, tags) for dt, shape, axes in spec if dt in dtypes]


_TRANSPOSE_DEFAULT = (
    [(dt, s, (1, 0)) for s in ((2048, 512), (8192, 8192), (16384, 16384))
     for dt in ("float32", "bfloat16", "int8")]
    + [("float32", (4097, 1023), (1, 0)),
       ("float32", (64, 1024, 1024), (0, 2, 1)),
       ("bfloat16", (32, 128, 64, 64), (0, 2, 1, 3)),
       ("float32", (8, 16, 32, 64, 2), (4, 0, 3, 1, 2))])

# Beyond issue 5's cases (tagged "ragged"): 1- and 2-byte sides that are not multiples of 16 bytes (session 37),
# 8-byte, 4-byte and element accesses.
_TRANSPOSE_RAGGED = [("int8", (3, 8200, 8200), (0, 2, 1)), ("bfloat16", (8194, 8194), (1, 0)),
                     ("bfloat16", (50257, 768), (1, 0)), ("int8", (4097, 1023), (1, 0))]

_TRANSPOSE_QUICK = (
    [(dt, (256, 128), (1, 0)) for dt in ("float32", "bfloat16", "int8")]
    + [("float32", (33, 65), (1, 0)),
       ("float32", (4, 64, 64), (0, 2, 1)),
       ("bfloat16", (2, 16, 8, 8), (0, 2, 1, 3)),
       ("float32", (2, 3, 4, 5, 2), (4, 0, 3, 1, 2))])


def _matmul_cases(quick: bool, dtypes, ops):
    hi = lax.Precision.HIGHEST
    out = []
    if quick:
        mm = [("bfloat16", 128, 128, 128, None), ("float16", 128, 128, 128, None),
              ("bfloat16", 8, 256, 256, None), ("bfloat16", 100, 60, 70, None),
              ("float32", 128, 128, 128, hi), ("float32", 128, 128, 128, None)]
        lin = (64, 128, 128)
    else:
        mm = [(dt, s, s, s, None) for s in (4096, 8192) for dt in ("bfloat16", "float16")]
        mm += [("bfloat16", 16384, 1024, 4096, None), ("bfloat16", 1000, 1000, 1000, None),
               ("bfloat16", 8, 4096, 4096, None),
               ("float32", 4096, 4096, 4096, hi), ("float32", 512, 512, 256, hi),
               ("float32", 4096, 4096, 4096, None)]
        lin = (4096, 4096, 4096)
    if "matmul" in ops:
        out += [matmul_case(dt, m, n, k, precision=p) for dt, m, n, k, p in mm if dt in dtypes]
    if "linear" in ops and "bfloat16" in dtypes:
        out += [linear_case("bfloat16", *lin, residual=False), linear_case("bfloat16", *lin, residual=True)]
    return out


def default_cases(ops=OPS, dtypes=FLOAT_DTYPES + ("int8",)) -> list[Case]:
    """The sweeps of issues 3-6 (the figures README quotes)."""
    cases = _norm_softmax_sweep(SWEEP_COLS, sweep_rows, dtypes, ops)
    # Non-last axes: the register column tile (2048 rows), and a long axis split over CTAs (32768 rows, session 30).
    cases += _extra_norm_softmax(dtypes, ops, (16, 2048, 2048), ((64, 2048, 1024), (4, 32768, 128)))
    if "transpose" in ops:
        cases += _transpose_cases(_TRANSPOSE_DEFAULT, dtypes)
        cases += _transpose_cases(_TRANSPOSE_RAGGED, dtypes, ("ragged",))
    return cases + _matmul_cases(False, dtypes, ops)


def quick_cases(ops=OPS, dtypes=FLOAT_DTYPES + ("int8",)) -> list[Case]:
    """A handful of small shapes per op: seconds on a CPU (CI, smoke tests)."""
    cases = _norm_softmax_sweep((32, 1000, 4096), lambda c: 256, dtypes, ops)
    cases += _extra_norm_softmax(dtypes, ops, (2, 128, 128), ((4, 96, 32),))
    if "transpose" in ops:
        cases += _transpose_cases(_TRANSPOSE_QUICK, dtypes)
    return cases + _matmul_cases(True, dtypes, ops)


def parse_dtypes(text: str | None) -> tuple[str, ...]:
    if not text:
        return FLOAT_DTYPES + ("int8",)
    out = []
    for t in text.replace(",", " ").split():
        name = DTYPE_ALIASES.get(t.lower(), t.lower())
        if name not in DTYPES or name == "bool":
            raise ValueError(f"--dtypes: unknown dtype {t!r}; expected some of "
                             f"{', '.join(FLOAT_DTYPES + ('int8',))}")
        out.append(name)
    return tuple(dict.fromkeys(out))


def parse_ops(text: str | None) -> tuple[str, ...]:
    if not text:
        return OPS
    out = []
    for t in text.replace(",", " ").split():
        if t not in OPS:
            raise ValueError(f"--ops: unknown op {t!r}; expected some of {', '.join(OPS)}")
        out.append(t)
    return tuple(dict.fromkeys(out))
