"""matmul and linear: ``jnp.matmul`` semantics and a fused ``act(x @ w + bias) + residual``.

Two primitives, ``jk_matmul`` (a, b) and ``jk_linear`` (x, w, bias, residual), lower to the FFI targets of
the same names. The wrappers validate everything, turn 1-D operands into matrices and left-pad every
operand with 1s to one rank R >= 2; batch dims broadcast inside the kernels through 0 strides, so a
broadcast operand is never materialised. An absent bias/residual is a rank-1 array of size 0.

Precision follows ``jax.lax.Precision``: DEFAULT and HIGH may use TF32 tensor cores for float32 on GPUs
(as XLA does); HIGHEST is exact float32. Half types always accumulate in float32. On CPU every
precision is exact float32.

Rows that are not 16-byte aligned (K or N not a multiple of 8 half / 4 float32 elements) keep the tensor
cores' fast tiers out (TMA and cp.async move 16-byte rows). On CUDA, with M > 8, the lowering pads K and N
up to the next multiple with zeros (XLA pads: a, b, bias and a residual with N columns), runs the kernel on
the aligned problem and slices the output back (`_cuda_padding`). JK_MATMUL_PAD=0 (read when the op is
traced; a primitive parameter, so it is part of the compilation cache key) keeps the unaligned kernels.
"""
from __future__ import annotations

import os

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax.interpreters import mlir

from . import _checks
from ._primitive import absent, define_primitive, is_absent, with_workspace
from ._sharding import MatmulPartitioning

# Same codes as cuda/matmul/matmul_problem.h (enum class Activation).
ACTIVATIONS = {None: 0, "relu": 1, "gelu": 2, "gelu_tanh": 3, "silu": 4}
MAX_BATCH_DIMS = 8

_PRECISION_STRINGS = {"default": 0, "bfloat16": 0, "fastest": 0, "high": 1, "tensorfloat32": 1,
                      "bfloat16_3x": 1, "highest": 2, "float32": 2}


def _precision_code(op: str, precision) -> int:
    """0 (DEFAULT), 1 (HIGH) or 2 (HIGHEST); a pair takes the more exact of the two."""
    if precision is None:
        flag = jax.config.jax_default_matmul_precision  # honours jax.default_matmul_precision(...)
        return _PRECISION_STRINGS.get(flag, 0) if isinstance(flag, str) else 0
    if isinstance(precision, lax.Precision):
        return int(precision.value)
    if isinstance(precision, str):
        if precision.lower() not in _PRECISION_STRINGS:
            raise ValueError(f"{op}: argument 'precision': expected None, a jax.lax.Precision or one of "
                             f"{sorted(_PRECISION_STRINGS)}; got {precision!r}")
        return _PRECISION_STRINGS[precision.lower()]
    if isinstance(precision, (tuple, list)) and len(precision) == 2:
        return max(_precision_code(op, p) for p in precision)
    raise TypeError(f"{op}: argument 'precision': expected None, a jax.lax.Precision, a string or a pair "
                    f"of them; got {type(precision).__name__} {precision!r}")


def _broadcast_batch(op: str, arg: str, *shapes) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"{op}: argument '{arg}': expected batch dims that broadcast together; got "
                         + " and ".join(str(tuple(s)) for s in shapes)) from None


def _pad(x, rank: int):
    return x if x.ndim == rank else jnp.reshape(x, (1,) * (rank - x.ndim) + tuple(x.shape))


# ---- primitives -----------------------------------------------------------------------------------

def _out_aval(a, b, *rest):
    r = a.ndim
    # Every operand's batch dim is the output's or 1 (0 broadcasts with 1 like any size).
    batch = [next((v for v in d if v != 1), 1)
             for d in zip(*(x.shape[:r - 2] for x in (a, b, *rest) if not is_absent(x)))]
    return a.update(shape=tuple(batch) + (a.shape[-2], b.shape[-1]), dtype=a.dtype)


def _matmul_abstract(a, b, *, precision, pad=False):
    return _out_aval(a, b)


def _linear_abstract(a, b, bias, residual, *, precision, activation, pad=False):
    return _out_aval(a, b, bias, residual)


def _pad_dims(x, pads):
    """Zeros after the last len(pads) dims of x: pads[i] more along dim -len(pads) + i."""
    widths = [(0, 0)] * (x.ndim - len(pads)) + [(0, p) for p in pads]
    return jnp.pad(x, widths) if any(pads) else x


# The CUDA split-K decode tier (SplitPipe, cuda/matmul/matmul_decode_split.cuh) sums float32 partials of at most
# this many K ranks, kept in a workspace that the lowering adds as a second custom-call result (XLA allocates it,
# so the call stays graph-capturable); at most _WORKSPACE_MAX_BYTES of it.
_SPLIT_MAX_RANKS = 16
_WORKSPACE_MAX_BYTES = 32 << 20


def _workspace_elems(avals_in, out) -> int:
    """Floats of workspace for the decode tier's problems (bf16/f16, M <= 16 after the handler's fold, K and N
    multiples of 8); 0 elsewhere. The handler folds the batch into M where b (and bias) are shared, a is not
    broadcast and a residual, if any, has the output's shape (matmul_ffi.cc, BuildProblem). Folded or not, the
    partials take 16 ranks x batch x M x N floats at most; the launcher checks the size it gets."""
    a, b = avals_in[0], avals_in[1]
    bias = avals_in[2] if len(avals_in) > 2 else None
    residual = avals_in[3] if len(avals_in) > 3 else None
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if np.dtype(a.dtype) not in (np.dtype(jnp.bfloat16), np.dtype(jnp.float16)) or k == 0 or k % 8 or n % 8:
        return 0
    batch_dims = tuple(out.shape[:-2])
    batch = int(np.prod(batch_dims, dtype=np.int64))
    absent = lambda x: x is None or is_absent(x)
    shared = lambda x: absent(x) or all(d == 1 for d in x.shape[:-2])
    folds = (shared(b) and shared(bias) and tuple(a.shape[:-2]) == batch_dims and
             (absent(residual) or tuple(residual.shape) == tuple(out.shape)))
    rows = m * batch if folds else m
    elems = _SPLIT_MAX_RANKS * batch * m * n
    return elems if rows <= 16 and 0 < elems * 4 <= _WORKSPACE_MAX_BYTES else 0


def _cuda_padding(kernel, ffi_rule):
    """The FFI call as it is, or (params["pad"], M > 8, K or N off 16-byte rows) the same call on operands
    zero-padded to 16-byte rows and the output sliced back. Zero columns of a and rows of b add nothing to the sums;
    the extra output columns are dropped."""
    def rule(ctx, *operands, **params):
        a, b = ctx.avals_in[0], ctx.avals_in[1]
        unit = 16 // np.dtype(a.dtype).itemsize
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        if not params["pad"] or m <= 8 or (k % unit == 0 and n % unit == 0):
            return ffi_rule(ctx, *operands, **params)
        dk, dn = -k % unit, -n % unit

        def padded(a, b, *epilogue):
            rest = []
            for i, x in enumerate(epilogue):  # bias (..., N), residual broadcastable to the output
                wide = not is_absent(x) and x.shape[-1] == n and (i == 0 or n > 1)
                rest.append(_pad_dims(x, (dn,)) if wide else x)
            out = kernel.bind(_pad_dims(a, (dk,)), _pad_dims(b, (dk, dn)), *rest, **{**params, "pad": False})
            return lax.slice_in_dim(out, 0, n, axis=out.ndim - 1) if dn else out

        return mlir.lower_fun(padded, multiple_results=False)(ctx, *operands)
    return rule


def _cuda_lowering(platform, kernel, ffi_rule):
    """The lowering rule for `platform`: on CUDA, the FFI call with the decode tier's workspace where it may run
    (with_workspace), on operands padded to 16-byte rows where they are not (_cuda_padding); elsewhere as it is."""
    if platform != "cuda":
        return ffi_rule
    elems = lambda ctx, **_: _workspace_elems(ctx.avals_in, ctx.avals_out[0])
    return _cuda_padding(kernel, with_workspace(ffi_rule, elems))


def _pad_unaligned() -> bool:
    return os.environ.get("JK_MATMUL_PAD", "1") != "0"


def _batch_rule(get_prim):
    """vmap over any axis of any operand -> one custom call.

    The mapped axis becomes a new batch dim: where every mapped operand already has it at the same
    position in front of its matrix dims it stays there (no copy) and the others get a size-1 axis
    there; otherwise it moves to the front. The handler then folds innermost batch dims shared by b
    and bias into M, so vmap of ``x @ w`` over x runs as one tall GEMM.
    """
    def rule(args, dims, **params):
        r = args[0].ndim - (dims[0] is not None)  # unbatched rank
        mapped = [d for x, d in zip(args, dims) if d is not None]
        p = mapped[0] if all(d == mapped[0] and d <= r - 2 for d in mapped) else 0
        new = []
        for x, d in zip(args, dims):
            if d is None:
                new.append(x if is_absent(x) else jnp.expand_dims(x, p))
            else:
                new.append(x if d == p else jnp.moveaxis(x, d, p))
        return get_prim().bind(*new, **params), p
    return rule


_matmul_p = define_primitive(
    "jk_matmul", abstract_eval=_matmul_abstract, batch_rule=_batch_rule(lambda: _matmul_p),
    partitioning=MatmulPartitioning(linear=False), wrap_lowering=_cuda_lowering,
    attrs=lambda p: dict(precision=np.int64(p["precision"])))
_linear_p = define_primitive(
    "jk_linear", abstract_eval=_linear_abstract, batch_rule=_batch_rule(lambda: _linear_p),
    partitioning=MatmulPartitioning(linear=True), wrap_lowering=_cuda_lowering,
    attrs=lambda p: dict(precision=np.int64(p["precision"]), activation=np.int64(p["activation"])))


# ---- public API -----------------------------------------------------------------------------------

def _check_operands(op: str, a_name: str, a, b_name: str, b):
    _checks.check_float_dtype(op, a_name, a)
    _checks.check_float_dtype(op, b_name, b)
    _checks.check_same_dtype(op, b_name, b, a_name, a)
    for name, x in ((a_name, a), (b_name, b)):
        if x.ndim == 0:
            raise ValueError(f"{op}: argument '{name}': expected an array of rank >= 1; got a scalar")


def _as_matrices(op: str, a_name: str, a, b_name: str, b):
    """Matrices for the kernel, the output batch dims, and the final output shape."""
    a2 = jnp.reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = jnp.reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"{op}: argument '{b_name}': expected contraction dim {a2.shape[-1]} (the last dim "
                         f"of '{a_name}', shape {tuple(a.shape)}); got shape {tuple(b.shape)}")
    batch = _broadcast_batch(op, b_name, a2.shape[:-2], b2.shape[:-2])
    if len(batch) > MAX_BATCH_DIMS:
        raise ValueError(f"{op}: argument '{a_name}': expected at most {MAX_BATCH_DIMS} batch dims; got "
                         f"{len(batch)}")
    final = batch + ((a2.shape[-2],) if a.ndim > 1 else ()) + ((b2.shape[-1],) if b.ndim > 1 else ())
    return a2, b2, batch, final


def matmul(a, b, *, precision=None):
    """``jnp.matmul(a, b, precision=precision)`` as one custom call."""
    op = "matmul"
    _check_operands(op, "a", a, "b", b)
    prec = _precision_code(op, precision)
    a2, b2, batch, final = _as_matrices(op, "a", a, "b", b)
    r = len(batch) + 2
    out = _matmul_p.bind(_pad(a2, r), _pad(b2, r), precision=prec, pad=_pad_unaligned())
    return jnp.reshape(out, final)


def linear(x, w, bias=None, *, activation=None, residual=None, precision=None):
    """``activation(x @ w + bias) + residual``, fused into the matmul's epilogue.

    x (..., K) or (K,); w (K, N), or batched (..., K, N) broadcasting against x's batch dims like
    ``jnp.matmul``; bias (N,); residual broadcastable to the output shape. Accumulation and the
    epilogue run in float32; the output has the input dtype. activation: None, "relu", "gelu" (exact
    erf), "gelu_tanh" or "silu".
    """
    op = "linear"
    _check_operands(op, "x", x, "w", w)
    if w.ndim < 2:
        raise ValueError(f"{op}: argument 'w': expected shape (K, N) or (..., K, N); got {tuple(w.shape)}")
    if activation is not None and not isinstance(activation, str):
        raise TypeError(f"{op}: argument 'activation': expected None or one of "
                        f"{[k for k in ACTIVATIONS if k]}; got {type(activation).__name__}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"{op}: argument 'activation': expected None or one of "
                         f"{[k for k in ACTIVATIONS if k]}; got {activation!r}")
    prec = _precision_code(op, precision)
    x2, w2, batch, final = _as_matrices(op, "x", x, "w", w)
    r = len(batch) + 2
    n = w.shape[-1]
    if bias is None:
        bias2 = absent(x.dtype)
    else:
        _checks.check_float_dtype(op, "bias", bias)
        _checks.check_same_dtype(op, "bias", bias, "x", x)
        _checks.check_shape(op, "bias", bias, (n,))
        bias2 = jnp.reshape(bias, (1,) * (r - 1) + (n,))
    if residual is None:
        res2 = absent(x.dtype)
    else:
        _checks.check_float_dtype(op, "residual", residual)
        _checks.check_same_dtype(op, "residual", residual, "x", x)
        try:
            ok = tuple(np.broadcast_shapes(residual.shape, final)) == tuple(final)
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{op}: argument 'residual': expected a shape broadcastable to the output "
                             f"shape {tuple(final)}; got {tuple(residual.shape)}")
        res2 = _pad(residual, len(final))
        if x.ndim == 1:  # the kernel's output has an M dim of 1 that `final` dropped
            res2 = jnp.expand_dims(res2, -2)
        res2 = _pad(res2, r)
    out = _linear_p.bind(_pad(x2, r), _pad(w2, r), bias2, res2, precision=prec,
                         activation=ACTIVATIONS[activation], pad=_pad_unaligned())
    return jnp.reshape(out, final)
