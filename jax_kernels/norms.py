"""LayerNorm and RMSNorm as JAX primitives over the ``jk_layer_norm`` / ``jk_rms_norm`` FFI targets.

Statistics are float32 for every input dtype (LayerNorm: two passes or Welford, never the naive sum of
squares). ``scale`` and ``bias`` must have shape ``(x.shape[axis],)`` and x's dtype: a float32 scale for a
bfloat16 x is refused rather than silently rounded (cast it yourself).

The kernels see ``scale``/``bias`` as ``(G, n)``: row group ``o`` of the ``(outer, n, inner)`` view of x
uses parameter row ``o // (outer // G)``. That lets ``vmap`` over x, scale and bias (any axis of each)
lower to one custom call without transposing x or broadcasting the parameters to x's size.

Also here, for sharding the normalised axis over devices: ``layer_norm_stats`` / ``rms_norm_stats`` (local
statistics) and ``layer_norm_apply`` / ``rms_norm_apply`` (normalise with given statistics).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from . import _checks
from ._primitive import absent, define_primitive, is_absent, split_axis_workspace, with_workspace
from ._sharding import NormPartitioning

_F32 = np.dtype(np.float32)


def _stat_shape(shape, axis):
    return tuple(d for i, d in enumerate(shape) if i != axis)


# ---- batching: shared by every primitive here ----------------------------------------------------
def _batch_size(args, dims):
    for a, d in zip(args, dims):
        if d is not None:
            return a.shape[d]
    raise AssertionError("batching rule called without a batched argument")


def _regroup(param, pdim, size, outer, pre, post, n):
    """Rebuilds a (G, n) parameter for x with a batch axis of `size` inserted into its outer dims.

    x's outer dims became (pre..., batch, post...) with prod(pre) * prod(post) == outer. Row o' of the
    batched x is (p, b, s) with o' = (p * size + b) * post + s; it used row o = p * post + s before, so its
    parameter row is b * G + o // (outer // G) for a batched parameter and o // (outer // G) otherwise.
    Returns the (G', n) parameter with consecutive blocks of rows sharing a row: usually the parameter
    itself or a small gather, never something of x's size unless the grouping truly needs it.
    """
    if is_absent(param) and pdim is None:
        return param
    if pdim is not None:
        param = jnp.moveaxis(param, pdim, 0)
        groups = param.shape[1]
        param = param.reshape(size * groups, n)
    else:
        groups = param.shape[0]
    new_outer = outer * size
    if new_outer == 0:
        return param[:1] if param.shape[0] else jnp.zeros((1, n), param.dtype)
    rows = outer // groups  # rows per group before batching
    if pdim is None and rows % post == 0:
        return param  # groups are unions of whole `post` blocks: the batch axis only lengthens them
    block = math.gcd(rows, post)
    starts = np.arange(new_outer // block, dtype=np.int64) * block
    p, rem = np.divmod(starts, size * post)
    b, s = np.divmod(rem, post)
    idx = (p * post + s) // rows
    if pdim is not None:
        idx = b * groups + idx
    if idx.shape[0] == param.shape[0] and np.array_equal(idx, np.arange(idx.shape[0])):
        return param
    return jnp.take(param, jnp.asarray(idx, dtype=jnp.int32), axis=0, mode="clip")


def _batch_x_params(x, bx, params, pdims, axis, size):
    """Gives x a batch axis (kept in place where possible) and regroups the parameters to match.

    Returns (x, bx, axis) for the batched call and the regrouped parameters."""
    any_param = any(d is not None for d in pdims)
    if bx is None:  # only parameters are batched: every batch element normalises the same x
        x = jnp.broadcast_to(x[None], (size,) + x.shape)
        bx = 0
    ax = axis + (1 if bx <= axis else 0)
    if bx > ax and any_param:
        # The batch axis lies after the normalised axis (in `inner`), but the parameter row is picked
        # by the outer index only: move it to the front.
        x = jnp.moveaxis(x, bx, 0)
        bx, ax = 0, axis + 1
    n = x.shape[ax]
    if bx > ax:  # batch in inner, parameters unbatched: the outer geometry is unchanged
        return x, bx, ax, list(params)
    pre = math.prod(x.shape[:bx])
    post = math.prod(x.shape[bx + 1:ax])
    outer = pre * post
    out = [_regroup(p, d, size, outer, pre, post, n) for p, d in zip(params, pdims)]
    return x, bx, ax, out


def _stat_dim(bx, ax):
    return bx if bx < ax else bx - 1


# ---- jk_layer_norm ---------------------------------------------------------------------------------
def _ln_abstract(x, scale, bias, *, axis, epsilon, return_stats):
    stat = _stat_shape(x.shape, axis) if return_stats else (0,)
    return (x.update(shape=x.shape, dtype=x.dtype), jax.core.ShapedArray(stat, _F32),
            jax.core.ShapedArray(stat, _F32))


def _ln_batch(args, dims, *, axis, epsilon, return_stats):
    x, scale, bias = args
    size = _batch_size(args, dims)
    x, bx, ax, (scale, bias) = _batch_x_params(x, dims[0], (scale, bias), dims[1:], axis, size)
    outs = _ln_p.bind(x, scale, bias, axis=ax, epsilon=epsilon, return_stats=return_stats)
    sd = _stat_dim(bx, ax) if return_stats else None  # the (0,) placeholders carry no batch axis
    return outs, (bx, sd, sd)


# ---- the CUDA lowering's workspace -----------------------------------------------------------------
def _norm_lowering(platform, kernel, ffi_rule):
    """On CUDA, the FFI rule with the split-axis tier's workspace (split_axis_workspace) as a last result where that
    tier may run (cuda/norm/norm_split.cuh); elsewhere as is."""
    def elems(ctx, *, axis, **_):
        return split_axis_workspace(ctx.avals_in[0].shape, axis)
    return with_workspace(ffi_rule, elems) if platform == "cuda" else ffi_rule


_ln_p = define_primitive(
    "jk_layer_norm", abstract_eval=_ln_abstract, batch_rule=_ln_batch, multiple_results=True,
    partitioning=NormPartitioning("layer"), wrap_lowering=_norm_lowering,
    attrs=lambda p: dict(epsilon=np.float32(p["epsilon"]), axis=np.int64(p["axis"])))


# ---- jk_rms_norm -----------------------------------------------------------------------------------
def _rms_abstract(x, scale, *, axis, epsilon):
    return x.update(shape=x.shape, dtype=x.dtype)


def _rms_batch(args, dims, *, axis, epsilon):
    x, scale = args
    size = _batch_size(args, dims)
    x, bx, ax, (scale,) = _batch_x_params(x, dims[0], (scale,), dims[1:], axis, size)
    return _rms_p.bind(x, scale, axis=ax, epsilon=epsilon), bx


_rms_p = define_primitive(
    "jk_rms_norm", abstract_eval=_rms_abstract, batch_rule=_rms_batch, partitioning=NormPartitioning("rms"),
    wrap_lowering=_norm_lowering,
    attrs=lambda p: dict(epsilon=np.float32(p["epsilon"]), axis=np.int64(p["axis"])))


# ---- statistics only / apply given statistics ------------------------------------------------------
def _stats_abstract(x, *, axis, outputs):
    s = jax.core.ShapedArray(_stat_shape(x.shape, axis), _F32)
    return (s,) * outputs


def _stats_batch_for(prim, outputs):
    def rule(args, dims, *, axis, outputs=outputs):
        (x,), (bx,) = args, dims
        ax = axis + (1 if bx <= axis else 0)
        sd = _stat_dim(bx, ax)
        return prim().bind(x, axis=ax, outputs=outputs), (sd,) * outputs
    return rule


_ln_stats_p = define_primitive(
    "jk_layer_norm_stats", abstract_eval=_stats_abstract, multiple_results=True,
    batch_rule=_stats_batch_for(lambda: _ln_stats_p, 2), attrs=lambda p: dict(axis=np.int64(p["axis"])))
_rms_stats_p = define_primitive(
    "jk_rms_norm_stats", abstract_eval=_stats_abstract, multiple_results=True,
    batch_rule=_stats_batch_for(lambda: _rms_stats_p, 1), attrs=lambda p: dict(axis=np.int64(p["axis"])))


def _apply_abstract(x, *rest, axis):
    return x.update(shape=x.shape, dtype=x.dtype)


def _apply_batch_for(prim, num_stats):
    """x and the statistics get a leading batch axis (broadcast where unbatched); parameters regroup."""
    def rule(args, dims, *, axis):
        size = _batch_size(args, dims)
        lead = []
        for a, d in zip(args[:1 + num_stats], dims[:1 + num_stats]):
            lead.append(jnp.broadcast_to(a[None], (size,) + a.shape) if d is None else jnp.moveaxis(a, d, 0))
        x, stats = lead[0], lead[1:]
        x, bx, ax, params = _batch_x_params(x, 0, args[1 + num_stats:], dims[1 + num_stats:], axis, size)
        return prim().bind(x, *stats, *params, axis=ax), bx
    return rule


_ln_apply_p = define_primitive(
    "jk_layer_norm_apply", abstract_eval=_apply_abstract, batch_rule=_apply_batch_for(lambda: _ln_apply_p, 2),
    attrs=lambda p: dict(axis=np.int64(p["axis"])))
_rms_apply_p = define_primitive(
    "jk_rms_norm_apply", abstract_eval=_apply_abstract, batch_rule=_apply_batch_for(lambda: _rms_apply_p, 1),
    attrs=lambda p: dict(axis=np.int64(p["axis"])))


# ---- public API ------------------------------------------------------------------------------------
def _check_x(op, x, axis):
    _checks.check_float_dtype(op, "x", x)
    return _checks.normalize_axis(op, axis, x.ndim)


def _check_epsilon(op, epsilon):
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating, np.integer)):
        raise TypeError(f"{op}: argument 'epsilon': expected a float; got {type(epsilon).__name__}")
    e = float(epsilon)
    if not math.isfinite(e) or e < 0:
        raise ValueError(f"{op}: argument 'epsilon': expected a finite value >= 0; got {e}")
    return e


def _param(op, name, p, x, axis):
    """A (n,) scale/bias as the kernel's (1, n), or the absent marker."""
    if p is None:
        return absent(x.dtype)
    _checks.check_array(op, name, p)
    _checks.check_same_dtype(op, name, p, "x", x)
    _checks.check_shape(op, name, p, (x.shape[axis],))
    return jnp.reshape(p, (1, x.shape[axis]))


def _check_stat(op, name, s, x, axis):
    _checks.check_array(op, name, s)
    _checks.check_float_dtype(op, name, s, allowed=(jnp.float32,))
    _checks.check_shape(op, name, s, _stat_shape(x.shape, axis))


def layer_norm(x, scale=None, bias=None, *, axis=-1, epsilon=1e-5, return_stats=False):
    """LayerNorm over ``axis``: ``(x - mean) * rsqrt(var + epsilon) * scale + bias``.

    float32 statistics for every dtype; returns ``y`` in x's dtype, or ``(y, mean, rstd)`` with float32
    ``mean``/``rstd`` of x's shape without ``axis`` when ``return_stats`` (same kernel, no extra pass).
    """
    op = "layer_norm"
    ax = _check_x(op, x, axis)
    eps = _check_epsilon(op, epsilon)
    if not isinstance(return_stats, (bool, np.bool_)):
        raise TypeError(f"{op}: argument 'return_stats': expected a bool; got {type(return_stats).__name__}")
    s = _param(op, "scale", scale, x, ax)
    b = _param(op, "bias", bias, x, ax)
    y, mean, rstd = _ln_p.bind(x, s, b, axis=ax, epsilon=eps, return_stats=bool(return_stats))
    return (y, mean, rstd) if return_stats else y


def rms_norm(x, scale=None, *, axis=-1, epsilon=1e-6):
    """RMSNorm over ``axis``: ``x * rsqrt(mean(x^2) + epsilon) * scale`` with float32 statistics."""
    op = "rms_norm"
    ax = _check_x(op, x, axis)
    eps = _check_epsilon(op, epsilon)
    return _rms_p.bind(x, _param(op, "scale", scale, x, ax), axis=ax, epsilon=eps)


def layer_norm_stats(x, *, axis=-1):
    """Local LayerNorm statistics over ``axis``: float32 ``(mean, m2)``, m2 = sum((x - mean)^2).

    Partial results over shards of the axis merge exactly with Chan's formula (count, mean, M2)."""
    ax = _check_x("layer_norm_stats", x, axis)
    return tuple(_ln_stats_p.bind(x, axis=ax, outputs=2))


def rms_norm_stats(x, *, axis=-1):
    """Local mean of squares over ``axis`` (float32)."""
    ax = _check_x("rms_norm_stats", x, axis)
    return _rms_stats_p.bind(x, axis=ax, outputs=1)[0]


def layer_norm_apply(x, mean, rstd, scale=None, bias=None, *, axis=-1):
    """``(x - mean) * rstd * scale + bias`` with given float32 statistics of x's shape without ``axis``."""
    op = "layer_norm_apply"
    ax = _check_x(op, x, axis)
    _check_stat(op, "mean", mean, x, ax)
    _check_stat(op, "rstd", rstd, x, ax)
    return _ln_apply_p.bind(x, mean, rstd, _param(op, "scale", scale, x, ax), _param(op, "bias", bias, x, ax),
                            axis=ax)


def rms_norm_apply(x, rstd, scale=None, *, axis=-1):
    """``x * rstd * scale`` with a given float32 ``rstd`` of x's shape without ``axis``."""
    op = "rms_norm_apply"
    ax = _check_x(op, x, axis)
    _check_stat(op, "rstd", rstd, x, ax)
    return _rms_apply_p.bind(x, rstd, _param(op, "scale", scale, x, ax), axis=ax)
