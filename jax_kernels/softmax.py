"""softmax and log_softmax as JAX primitives, plus the statistics-only and apply-given-statistics entries
that sharding along the softmax axis builds on.

Semantics are those of ``jax.nn.softmax`` / ``jax.nn.log_softmax`` (jax 0.10.2), ``where`` included:
- masked entries do not take part; their output is 0 (softmax) or -inf (log_softmax);
- a row with no live entry returns 0 / -inf everywhere (all entries are masked);
- a row with one live entry returns 1 / 0 there (NaN if that entry is -inf or +inf or NaN);
- a live +inf, a live NaN, or live entries that are all -inf make every live entry of the row NaN
  (masked entries keep 0 / -inf); other rows are untouched.
Statistics are float32 for every dtype (max subtracted), the output has x's dtype.

The mask goes to the kernel with its own size-1 dims (reshaped, never broadcast to x's shape) and is
applied inside it: a (2048, 2048) causal mask for a (16, 2048, 2048) tensor is read per row.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from . import _checks
from ._primitive import absent, define_primitive, is_absent, split_axis_workspace, with_workspace
from ._sharding import SoftmaxPartitioning

# The kernels' mask index map merges dims into at most 8 per side of the axis, which every array of rank
# <= 9 satisfies; a mask for a higher-rank x is expanded to x's shape (bool, rare).
_MAX_BROADCAST_RANK = 9


def _fit_mask(mask, x_shape):
    if not is_absent(mask) and len(x_shape) > _MAX_BROADCAST_RANK:
        return jnp.broadcast_to(mask, x_shape)
    return mask


def _attrs(params):
    return dict(axis=np.int64(params["axis"]))


def _stats_shape(shape, axis):
    return tuple(d for k, d in enumerate(shape) if k != axis)


# ---- batching ---------------------------------------------------------------------------------------
# The batch dim stays where vmap put it on x (no transpose of x): the axis index shifts past it, an
# unbatched mask gets a size-1 dim there (a reshape), a batched mask has its batch dim moved there (a bool
# array, usually small). Only a batched mask or statistics with an unbatched x force a broadcast of x.

def _batch_x_mask(x, xd, mask, md, axis, size):
    if xd is None:
        x = jnp.broadcast_to(x[None], (size,) + x.shape)
        xd = 0
    new_axis = axis + 1 if xd <= axis else axis
    if not is_absent(mask) or md is not None:
        mask = jnp.expand_dims(mask, xd) if md is None else jnp.moveaxis(mask, md, xd)
        mask = _fit_mask(mask, x.shape)
    return x, xd, mask, new_axis


def _batch_size(args, dims):
    return next(a.shape[d] for a, d in zip(args, dims) if d is not None)


def _softmax_batch(prim, args, dims, *, axis):
    x, mask = args
    x, xd, mask, new_axis = _batch_x_mask(x, dims[0], mask, dims[1], axis, _batch_size(args, dims))
    return prim.bind(x, mask, axis=new_axis), xd


def _stats_batch(args, dims, *, axis):
    x, mask = args
    x, xd, mask, new_axis = _batch_x_mask(x, dims[0], mask, dims[1], axis, _batch_size(args, dims))
    sd = xd if xd < new_axis else xd - 1  # the batch dim among the statistics' dims
    row_max, row_sum = _stats_p.bind(x, mask, axis=new_axis)
    return (row_max, row_sum), (sd, sd)


def _apply_batch(prim, args, dims, *, axis):
    x, mask, row_max, row_sum = args
    x, xd, mask, new_axis = _batch_x_mask(x, dims[0], mask, dims[1], axis, _batch_size(args, dims))
    sd = xd if xd < new_axis else xd - 1
    stats_shape = _stats_shape(x.shape, new_axis)

    def fit(v, vd):  # statistics are small: broadcasting or moving their batch dim is cheap
        if vd is None:
            return jnp.broadcast_to(jnp.expand_dims(v, sd), stats_shape)
        return jnp.moveaxis(v, vd, sd)

    return prim.bind(x, mask, fit(row_max, dims[2]), fit(row_sum, dims[3]), axis=new_axis), xd


# ---- primitives -------------------------------------------------------------------------------------

def _same_as_x(x, *rest, axis):
    return x.update(shape=x.shape, dtype=x.dtype)


def _stats_abstract(x, mask, *, axis):
    s = x.update(shape=_stats_shape(x.shape, axis), dtype=jnp.float32)
    return s, s


# The rules name their primitive at call time (the primitives below exist by then).
def _softmax_lowering(platform, kernel, ffi_rule):
    """On CUDA, the FFI rule with the split-axis tier's workspace (split_axis_workspace) as a last result where that
    tier may run (unmasked: the mask operand is the (0,) marker; cuda/softmax/softmax_split.cuh); elsewhere as is."""
    def elems(ctx, *, axis, **_):
        return split_axis_workspace(ctx.avals_in[0].shape, axis) if is_absent(ctx.avals_in[1]) else 0
    return with_workspace(ffi_rule, elems) if platform == "cuda" else ffi_rule


_softmax_p = define_primitive("jk_softmax", abstract_eval=_same_as_x, attrs=_attrs, wrap_lowering=_softmax_lowering,
                              partitioning=SoftmaxPartitioning(log=False),
                              batch_rule=lambda a, d, **p: _softmax_batch(_softmax_p, a, d, **p))
_log_softmax_p = define_primitive("jk_log_softmax", abstract_eval=_same_as_x, attrs=_attrs,
                                  wrap_lowering=_softmax_lowering,
                                  partitioning=SoftmaxPartitioning(log=True),
                                  batch_rule=lambda a, d, **p: _softmax_batch(_log_softmax_p, a, d, **p))
_stats_p = define_primitive("jk_softmax_stats", abstract_eval=_stats_abstract, batch_rule=_stats_batch,
                            attrs=_attrs, multiple_results=True)
_apply_p = define_primitive("jk_softmax_apply", abstract_eval=_same_as_x, attrs=_attrs,
                            batch_rule=lambda a, d, **p: _apply_batch(_apply_p, a, d, **p))
_log_apply_p = define_primitive("jk_log_softmax_apply", abstract_eval=_same_as_x, attrs=_attrs,
                                batch_rule=lambda a, d, **p: _apply_batch(_log_apply_p, a, d, **p))


# ---- public API -------------------------------------------------------------------------------------

def _prepare(op, x, axis, where):
    _checks.check_float_dtype(op, "x", x)
    x = jnp.asarray(x)
    ax = _checks.normalize_axis(op, axis, x.ndim)
    if where is None:
        return x, ax, absent(jnp.bool_)
    if isinstance(where, (bool, np.bool_)):
        where = np.asarray(where)
    _checks.check_array(op, "where", where)
    if np.dtype(where.dtype) != np.dtype(jnp.bool_):
        raise TypeError(f"{op}: argument 'where': expected dtype bool; got {_checks.dtype_name(where.dtype)}")
    shape = (1,) * (x.ndim - where.ndim) + tuple(where.shape)
    if where.ndim > x.ndim or any(m not in (1, d) for m, d in zip(shape, x.shape)):
        raise ValueError(f"{op}: argument 'where': expected a shape broadcastable to x's {tuple(x.shape)}; "
                         f"got {tuple(where.shape)}")
    return x, ax, _fit_mask(jnp.reshape(where, shape), x.shape)


def softmax(x, axis=-1, where=None):
    """``exp(x - max) / sum(exp(x - max))`` along ``axis`` (an int); ``where`` as in ``jax.nn.softmax``."""
    x, ax, mask = _prepare("softmax", x, axis, where)
    return _softmax_p.bind(x, mask, axis=ax)


def log_softmax(x, axis=-1, where=None):
    """``(x - max) - log(sum(exp(x - max)))`` along ``axis``; ``where`` as in ``jax.nn.log_softmax``."""
    x, ax, mask = _prepare("log_softmax", x, axis, where)
    return _log_softmax_p.bind(x, mask, axis=ax)


def softmax_stats(x, axis=-1, where=None):
    """Per-row float32 ``(max, sum(exp(x - max)))`` over the live entries, the axis removed.

    A row with no live entry gives ``(-inf, 0)``. Partials of shards along the axis combine as
    ``M = max(m_k)``, ``S = sum(s_k * exp(m_k - M))`` (skip shards with ``m_k = -inf``)."""
    x, ax, mask = _prepare("softmax_stats", x, axis, where)
    row_max, row_sum = _stats_p.bind(x, mask, axis=ax)
    return row_max, row_sum


def softmax_apply(x, row_max, row_sum, axis=-1, where=None, *, log=False):
    """softmax (log_softmax when ``log``) of x from given per-row statistics (as ``softmax_stats`` returns)."""
    op = "softmax_apply"
    x, ax, mask = _prepare(op, x, axis, where)
    expected = _stats_shape(x.shape, ax)
    for name, v in (("row_max", row_max), ("row_sum", row_sum)):
        _checks.check_float_dtype(op, name, v, allowed=(jnp.float32,))
        _checks.check_shape(op, name, v, expected)
    prim = _log_apply_p if log else _apply_p
    return prim.bind(x, mask, jnp.asarray(row_max), jnp.asarray(row_sum), axis=ax)
