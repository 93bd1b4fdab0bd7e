"""transpose: ``jnp.transpose`` as one custom call, for every dtype of 1, 2, 4 or 8 bytes.

The kernel never looks at values: bool, ints, floats and complex64 move as opaque storage chosen by
element size. The C++ planner (``cuda/transpose/transpose_plan.h``) merges axes and picks a copy, a
strided row copy (last axis kept) or a tiled transpose, identically on CPU and CUDA.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import jax.numpy as jnp
from jax import dtypes

from . import _checks
from ._primitive import define_primitive
from ._sharding import TransposePartitioning

_OP = "transpose"


def _transpose_abstract(x, *, permutation):
    return x.update(shape=tuple(x.shape[p] for p in permutation), dtype=x.dtype)


def _transpose_batch(args, dims, *, permutation):
    # vmap: the batch axis becomes output axis 0; every other axis moves as before (one custom call).
    (x,), (bd,) = args, dims
    perm = (bd,) + tuple(p + (p >= bd) for p in permutation)
    return _transpose_p.bind(x, permutation=perm), 0


_transpose_p = define_primitive(
    "jk_transpose", abstract_eval=_transpose_abstract, batch_rule=_transpose_batch,
    partitioning=TransposePartitioning(),
    attrs=lambda p: dict(permutation=np.asarray(p["permutation"], np.int64)))


def _check_dtype(x) -> None:
    _checks.check_array(_OP, "x", x)
    dt = np.dtype(x.dtype)
    bits = dtypes.itemsize_bits(dt) if hasattr(dtypes, "itemsize_bits") else 8 * dt.itemsize
    if bits not in (8, 16, 32, 64):  # sub-byte types are packed; 16-byte types (complex128) too wide
        raise TypeError(f"{_OP}: argument 'x': expected a dtype of 1, 2, 4 or 8 bytes (bool, integers, "
                        f"floats, complex64); got {dt.name} ({bits} bits)")


def _normalize_axes(axes, ndim: int) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(ndim - 1, -1, -1))
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        axes = (axes,)
    try:
        axes = tuple(axes)
    except TypeError:
        raise TypeError(f"{_OP}: argument 'axes': expected None or a sequence of ints; got "
                        f"{type(axes).__name__}") from None
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"{_OP}: argument 'axes': expected a sequence of ints; got an element of "
                            f"type {type(a).__name__} in {axes!r}")
    if len(axes) != ndim:
        raise ValueError(f"{_OP}: argument 'axes': expected a permutation of {ndim} axes (the rank of "
                         f"x); got {len(axes)} axes {axes!r}")
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"{_OP}: argument 'axes': expected axes in [{-ndim}, {ndim}) for an array "
                             f"of rank {ndim}; got {int(a)} in {axes!r}")
        out.append(int(a) % ndim)
    if len(set(out)) != ndim:
        raise ValueError(f"{_OP}: argument 'axes': expected each axis exactly once (a permutation); "
                         f"got {axes!r}")
    return tuple(out)


_MAX_MERGED_RANK = 16  # kMaxTransposeRank in cuda/transpose/transpose_plan.h


def _merged_rank(shape, perm) -> int:
    """The planner's rank after dropping size-1 axes and merging axes that stay adjacent."""
    keep = [j for j in perm if shape[j] != 1]
    return sum(1 for i, j in enumerate(keep) if i == 0 or j != keep[i - 1] + 1)


def transpose(x, axes: Sequence[int] | None = None):
    """Permutes the axes of ``x`` as ``jnp.transpose(x, axes)`` does.

    ``axes=None`` reverses the axes; negative axes count from the end. Any rank (0 included) and every
    dtype of 1, 2, 4 or 8 bytes (bool, int8-64, uint8-64, float16/bfloat16/float32/float64, complex64,
    float8 types). The identity permutation returns ``x`` itself (no kernel, as JAX allows).
    """
    _check_dtype(x)
    perm = _normalize_axes(axes, np.ndim(x))
    if perm == tuple(range(len(perm))):
        return jnp.asarray(x)
    shape = tuple(np.shape(x))
    if 0 not in shape and (len(shape) > 64 or _merged_rank(shape, perm) > _MAX_MERGED_RANK):
        raise ValueError(f"{_OP}: argument 'axes': expected a permutation that leaves at most "
                         f"{_MAX_MERGED_RANK} axes after dropping size-1 axes and merging axes that "
                         f"stay adjacent (and rank <= 64); got {perm} for shape {shape}")
    return _transpose_p.bind(jnp.asarray(x), permutation=perm)
