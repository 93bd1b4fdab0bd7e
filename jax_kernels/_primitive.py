"""The one primitive idiom every op uses.

Each op is a ``jax.extend.core.Primitive`` named after its FFI target (``jk_<op>``), with
- an abstract eval (shapes and dtypes only; the public wrapper has already validated the inputs),
- an eager impl that compiles the single primitive (``apply_primitive``),
- one lowering per platform through ``jax.ffi.ffi_lowering`` to the same target name: the CPU handler
  and the CUDA handler are registered under that name on their own platforms,
- a batching rule written for the op, so ``vmap`` lowers to a single custom call for the whole batch.

Primitive params are Python values (hashable); ``attrs(params)`` turns them into the typed FFI
attributes the C++ ``Bind()`` expects (``np.float32`` for ``Attr<float>``, ``np.int64`` for
``Attr<int64_t>``...). The names and types must match the handler's binding exactly.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

import jax
from jax.extend.core import Primitive
from jax.interpreters import batching, mlir

from . import _registry

try:  # public home of the eager impl in jax 0.10-0.11
    from jax.interpreters.xla import apply_primitive as _apply_primitive
except ImportError:  # pragma: no cover - moved in some future release
    from jax._src.dispatch import apply_primitive as _apply_primitive


AttrsFn = Callable[[dict[str, Any]], dict[str, Any]]


def _lowering(target: str, attrs: AttrsFn, platform: str):
    lower = jax.ffi.ffi_lowering(target)

    def rule(ctx, *operands, **params):
        if platform == "cuda" and target not in _registry.CUDA_TARGETS:
            raise RuntimeError(
                f"{target}: this jax-kernels build has no CUDA kernels (built without a CUDA "
                "compiler); reinstall on a machine with nvcc, or run on the CPU backend")
        return lower(ctx, *operands, **attrs(params))

    return rule


def define_primitive(name: str, *, abstract_eval: Callable, batch_rule: Callable, attrs: AttrsFn,
                     multiple_results: bool = False) -> Primitive:
    """Creates the primitive ``name`` lowered to the FFI target of the same name on CPU and CUDA."""
    p = Primitive(name)
    p.multiple_results = multiple_results
    p.def_impl(partial(_apply_primitive, p))
    p.def_abstract_eval(abstract_eval)
    batching.primitive_batchers[p] = batch_rule
    for platform in ("cpu", "cuda"):
        mlir.register_lowering(p, _lowering(name, attrs, platform), platform=platform)
    return p
