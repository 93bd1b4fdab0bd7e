"""Partitioning of the primitives under a sharded ``jit`` (Shardy rules + custom_partitioning).

``partitioned_lowering`` turns an op's partitioning object into the lowering of its public primitive:
one ``custom_partitioning`` function per distinct set of primitive params (cached), whose partition
callback picks operand shardings and builds the per-device program around the local kernel.
"""
from __future__ import annotations

from functools import lru_cache

from jax.experimental.custom_partitioning import custom_partitioning
from jax.interpreters import mlir


def _freeze(params: dict):
    return tuple(sorted(params.items()))


def partitioned_lowering(kernel, partitioning, multiple_results: bool):
    @lru_cache(maxsize=None)
    def partitioned(frozen):
        params = dict(frozen)

        def local(*args):
            return kernel.bind(*args, **params)

        cp = custom_partitioning(local)
        cp.def_partition(
            partition=lambda mesh, arg_shapes, result_shape: partitioning.partition(
                params, local, mesh, arg_shapes, result_shape),
            sharding_rule=lambda mesh, operand_types, result_types: partitioning.rule(
                params, mesh, operand_types, result_types))
        return cp

    def rule(ctx, *args, **params):
        fn = partitioned(_freeze(params))
        return mlir.lower_fun(fn, multiple_results=multiple_results)(ctx, *args)

    return rule
