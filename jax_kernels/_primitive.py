"""The one primitive idiom every op uses.

Each op is a ``jax.extend.core.Primitive`` named after its FFI target (``jk_<op>``), with
- an abstract eval (shapes and dtypes only; the public wrapper has already validated the inputs),
- an eager impl that compiles the single primitive (``apply_primitive``),
- one lowering per platform through ``jax.ffi.ffi_lowering`` to the same target name: the CPU handler
  and the CUDA handler are registered under that name on their own platforms,
- a batching rule written for the op, so ``vmap`` lowers to a single custom call for the whole batch.

Multi-device: a primitive given a ``partitioning`` (see ``_sharding.py``) lowers through
``jax.experimental.custom_partitioning`` to a device-local twin (``<name>_local``) that carries the FFI
lowering. On one device custom_partitioning inlines the local primitive, so the module holds the plain
custom call; under a sharded ``jit`` the op's partition callback decides each operand's sharding and the
per-device program (the kernel on the shard, plus any collective the algorithm needs).

Primitive params are Python values (hashable); ``attrs(params)`` turns them into the typed FFI
attributes the C++ ``Bind()`` expects (``np.float32`` for ``Attr<float>``, ``np.int64`` for
``Attr<int64_t>``...). The names and types must match the handler's binding exactly.
"""
from __future__ import annotations

import math
from functools import partial
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import batching, mlir
from jax._src import dispatch  # prim_requires_devices_during_lowering: no public home yet

from . import _registry

try:  # public home of the eager impl in jax 0.10-0.11
    from jax.interpreters.xla import apply_primitive as _apply_primitive
except ImportError:  # pragma: no cover - moved in some future release
    from jax._src.dispatch import apply_primitive as _apply_primitive


AttrsFn = Callable[[dict[str, Any]], dict[str, Any]]


def absent(dtype):
    """The marker of an absent optional operand (no scale, bias, mask, residual...): a (0,) array. The
    handlers test for it (``IsAbsent`` in cuda/common/ffi_helpers.h)."""
    return jnp.zeros((0,), dtype)


def is_absent(x) -> bool:
    """True for the (0,) marker; takes arrays, avals and MLIR types (anything with a shape)."""
    return len(x.shape) == 1 and x.shape[0] == 0


def _lowering(target: str, attrs: AttrsFn, platform: str):
    lower = jax.ffi.ffi_lowering(target)

    def rule(ctx, *operands, **params):
        if platform == "cuda" and target not in _registry.CUDA_TARGETS:
            raise RuntimeError(
                f"{target}: this jax-kernels build has no CUDA kernels (built without a CUDA "
                "compiler); reinstall on a machine with nvcc, or run on the CPU backend")
        return lower(ctx, *operands, **attrs(params))

    return rule


def with_workspace(ffi_rule, elems: Callable):
    """`ffi_rule` with a float32 workspace of ``elems(ctx, **params)`` elements as an extra last result of the custom
    call where that is non-zero (XLA allocates it, so the call stays graph-capturable), dropped after the call; the
    handler takes it as ``RemainingRets`` (TakeWorkspace in cuda/common/ffi_helpers.h)."""
    def rule(ctx, *operands, **params):
        count = elems(ctx, **params)
        if not count:
            return ffi_rule(ctx, *operands, **params)
        ws = ctx.avals_out[0].update(shape=(count,), dtype=jnp.dtype(jnp.float32))
        outs = ffi_rule(ctx.replace(avals_out=[*ctx.avals_out, ws]), *operands, **params)
        return list(outs)[:len(ctx.avals_out)]
    return rule


# The split-axis tiers (long non-last axes: cuda/norm/norm_split.cuh, cuda/softmax/softmax_split.cuh) keep each chunk's
# per-column statistics in the workspace: two floats per column per chunk of at least _SPLIT_MIN_CHUNK_ROWS rows,
# plus two per column for the merged statistics. Mirrors tile::kSplitMinRows / kSplitMinChunkRows
# (cuda/common/column_tile.cuh); the launchers check the size they get and take another tier if it is short.
_SPLIT_MIN_N = 4096
_SPLIT_MIN_CHUNK_ROWS = 256


def split_axis_workspace(shape, axis) -> int:
    """Floats of workspace for the split-axis tiers over `axis` of an array of `shape` (0: they do not run)."""
    if not shape:
        return 0
    axis %= len(shape)
    n, inner = shape[axis], math.prod(shape[axis + 1:])
    if inner <= 1 or n <= _SPLIT_MIN_N:
        return 0
    columns = math.prod(shape) // n
    return 2 * columns * (-(-n // _SPLIT_MIN_CHUNK_ROWS) + 1)


def _new_primitive(name: str, abstract_eval: Callable, multiple_results: bool) -> Primitive:
    p = Primitive(name)
    p.multiple_results = multiple_results
    p.def_impl(partial(_apply_primitive, p))
    p.def_abstract_eval(abstract_eval)
    return p


def define_primitive(name: str, *, abstract_eval: Callable, batch_rule: Callable, attrs: AttrsFn,
                     multiple_results: bool = False, partitioning=None,
                     wrap_lowering: Callable | None = None) -> Primitive:
    """Creates the primitive ``name`` lowered to the FFI target of the same name on CPU and CUDA.

    ``wrap_lowering(platform, kernel, rule)``, if given, returns the lowering rule registered for
    ``platform`` in place of the plain FFI ``rule`` (e.g. operands re-laid-out around the same custom call).

    ``partitioning``: an object with ``rule(params, mesh, operand_types, result_types)`` (the Shardy
    sharding rule) and ``partition(params, local, mesh, arg_shapes, result_shape)`` returning
    ``(mesh, per_device_fn, result_shardings, arg_shardings)``; ``local(*args)`` binds the kernel.
    """
    p = _new_primitive(name, abstract_eval, multiple_results)
    batching.primitive_batchers[p] = batch_rule
    if partitioning is None:
        kernel = p
    else:
        kernel = _new_primitive(name + "_local", abstract_eval, multiple_results)
        from ._sharding import partitioned_lowering
        mlir.register_lowering(p, partitioned_lowering(kernel, partitioning, multiple_results))
        # custom_partitioning's lowering needs the device assignment of the enclosing jit.
        dispatch.prim_requires_devices_during_lowering.add(p)
    for platform in ("cpu", "cuda"):
        rule = _lowering(name, attrs, platform)
        if wrap_lowering is not None:
            rule = wrap_lowering(platform, kernel, rule)
        mlir.register_lowering(kernel, rule, platform=platform)
    p.kernel = kernel  # the device-local primitive (p itself when there is no partitioning)
    return p
