"""Partitioning of the primitives under a sharded ``jit`` (Shardy rules + custom_partitioning).

``partitioned_lowering`` turns an op's partitioning object into the lowering of its public primitive:
one ``custom_partitioning`` function per distinct set of primitive params (cached), whose partition
callback picks operand shardings and builds the per-device program around the local kernel.
"""
from __future__ import annotations

import importlib
from functools import lru_cache

from jax.experimental.custom_partitioning import custom_partitioning
from jax.interpreters import mlir

from ._primitive import is_absent


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


# ---- helpers shared by the ops' partitioning objects ------------------------------------------------

def spec_list(arg_shape) -> list:
    """The operand's PartitionSpec as a list with one entry (mesh axis name(s) or None) per dim."""
    rank = len(arg_shape.shape)
    sharding = getattr(arg_shape, "sharding", None)
    spec = list(getattr(sharding, "spec", ()) or ())
    return (spec + [None] * rank)[:rank]


def axes_of(entry) -> tuple:
    """Mesh axis names in one spec entry (None, a name, or a tuple of names)."""
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


def named(mesh, spec):
    from jax.sharding import NamedSharding, PartitionSpec
    return NamedSharding(mesh, PartitionSpec(*spec))


def factor_names(rank: int, prefix: str = "d") -> list[str]:
    return [f"{prefix}{i}" for i in range(rank)]


def _mesh_size(mesh, axes) -> int:
    size = 1
    for a in axes:
        size *= mesh.shape[a]
    return size


# ---- LayerNorm / RMSNorm -----------------------------------------------------------------------------

class NormPartitioning:
    """Rows sharded: each device normalises its rows, no collective. Normalised axis sharded: each device
    computes per-row partial statistics of its slice (LayerNorm: Welford mean and M2; RMSNorm: mean of
    squares), an all-reduce combines those (a few floats per row, never the row itself), and each device
    normalises its slice with the global statistics. Operands: x, then (G, n) parameters or (0,) markers.
    """

    def __init__(self, kind: str):
        self.kind = kind  # "layer" or "rms"

    def rule(self, params, mesh, operand_types, result_types):
        axis = params["axis"]
        xf = factor_names(len(operand_types[0].shape))
        xf[axis] = "n"
        stats = " ".join(f for i, f in enumerate(xf) if i != axis) or "s"
        ops = [" ".join(xf)] + ["e" if is_absent(t) else "g n" for t in operand_types[1:]]
        if self.kind == "rms":
            res = [" ".join(xf)]
        else:
            res = [" ".join(xf)] + ["z" if is_absent(t) else stats for t in result_types[1:]]
        return ", ".join(ops) + " -> " + ", ".join(res)

    def partition(self, params, local, mesh, arg_shapes, result_shape):
        axis = params["axis"]
        xs = spec_list(arg_shapes[0])
        grouped = any(not is_absent(a) and a.shape[0] > 1 for a in arg_shapes[1:])
        if grouped:
            # vmapped parameters: a parameter row serves a block of outer rows, counted globally, so the
            # dims before the axis stay whole on every device.
            xs[:axis] = [None] * axis
        param_spec = lambda a: [None] if is_absent(a) else [None, xs[axis]]
        arg_shardings = (named(mesh, xs),) + tuple(named(mesh, param_spec(a)) for a in arg_shapes[1:])
        y_sharding = named(mesh, xs)
        if self.kind == "rms":
            result_shardings = y_sharding
        else:
            stat_spec = [s for i, s in enumerate(xs) if i != axis]
            # A list: the output tree of a multiple-results primitive's bind.
            result_shardings = [y_sharding] + [
                named(mesh, [None] if is_absent(r) else stat_spec) for r in result_shape[1:]]
        n_axes = axes_of(xs[axis])
        if not n_axes:
            return mesh, local, result_shardings, arg_shardings
        fn = self._distributed(params, n_axes, _mesh_size(mesh, n_axes))
        return mesh, fn, result_shardings, arg_shardings

    def _distributed(self, params, n_axes, shards):
        import jax.numpy as jnp
        from jax import lax

        from . import norms
        axis, eps = params["axis"], params["epsilon"]

        if self.kind == "rms":
            def rms(x, scale):
                ms = lax.pmean(norms._rms_stats_p.bind(x, axis=axis, outputs=1)[0], n_axes)
                return norms._rms_apply_p.bind(x, lax.rsqrt(ms + eps), scale, axis=axis)
            return rms

        def layer(x, scale, bias):
            mean_l, m2_l = norms._ln_stats_p.bind(x, axis=axis, outputs=2)
            n_local = x.shape[axis]
            # Chan's merge of equal-count partials: exact, no sum-of-squares cancellation.
            mean = lax.pmean(mean_l, n_axes)
            m2 = lax.psum(m2_l + n_local * jnp.square(mean_l - mean), n_axes)
            rstd = lax.rsqrt(m2 / (n_local * shards) + eps)
            y = norms._ln_apply_p.bind(x, mean, rstd, scale, bias, axis=axis)
            if params["return_stats"]:
                return [y, mean, rstd]
            empty = jnp.zeros((0,), jnp.float32)
            return [y, empty, empty]
        return layer


# ---- transpose -----------------------------------------------------------------------------------------

class TransposePartitioning:
    """The output's sharding is the permuted input sharding: each device transposes its shard."""

    def rule(self, params, mesh, operand_types, result_types):
        perm = params["permutation"]
        f = factor_names(len(perm))
        return " ".join(f) + " -> " + " ".join(f[p] for p in perm)

    def partition(self, params, local, mesh, arg_shapes, result_shape):
        s = spec_list(arg_shapes[0])
        out = [s[p] for p in params["permutation"]]
        return mesh, local, named(mesh, out), (named(mesh, s),)


# ---- matmul / linear -----------------------------------------------------------------------------------

class MatmulPartitioning:
    """Batch, M and N shardings stay local (each device multiplies its blocks). A sharded contraction
    dim K: each device multiplies its K slice and the partial products are summed with one all-reduce
    of the output; `linear`'s epilogue (bias, activation, residual) then runs once, after the sum,
    as XLA elementwise ops (it cannot run per shard: gelu(a + b) != gelu(a) + gelu(b)).
    Operands: a (..., M, K), b (..., K, N) [, bias (..., 1, N) or (0,), residual (..., M, N) or (0,)],
    all of one rank with broadcast (size-1) batch dims.
    """

    def __init__(self, linear: bool):
        self.linear = linear

    @staticmethod
    def _out_shape(operand_shapes):
        r = len(operand_shapes[0])
        batch = [max(s[i] for s in operand_shapes if len(s) == r) for i in range(r - 2)]
        return batch + [operand_shapes[0][r - 2], operand_shapes[1][r - 1]]

    _ROLES = (("m", "k"), ("k", "n"), ("m", "n"), ("m", "n"))  # a, b, bias, residual

    @classmethod
    def _dims(cls, j, shape, out):
        """(role, is_full) per dim of operand j; a size-1 dim broadcasting against the output is not."""
        r = len(out)
        sizes = {"m": out[r - 2], "n": out[r - 1]}
        dims = [(f"b{i}", shape[i] == out[i]) for i in range(r - 2)]
        dims += [(role, role == "k" or size == sizes[role]) for role, size in zip(cls._ROLES[j], shape[r - 2:])]
        return dims

    def rule(self, params, mesh, operand_types, result_types):
        shapes = [tuple(t.shape) for t in operand_types]
        out = self._out_shape(shapes)
        ops = []
        for j, s in enumerate(shapes):
            if len(s) != len(out):  # the (0,) marker of an absent bias/residual
                ops.append(f"e{j}")
                continue
            ops.append(" ".join(name if full else f"u{j}{name}" for name, full in self._dims(j, s, out)))
        res = " ".join([f"b{i}" for i in range(len(out) - 2)] + ["m", "n"])
        return ", ".join(ops) + " -> " + res, {"reduction_factors": ("k",)}

    def partition(self, params, local, mesh, arg_shapes, result_shape):
        shapes = [tuple(a.shape) for a in arg_shapes]
        specs = [spec_list(a) for a in arg_shapes]
        out = self._out_shape(shapes)
        r = len(out)
        used: set = set()

        def take(entry):
            axes = axes_of(entry)
            if not axes or used & set(axes):
                return None
            used.update(axes)
            return entry

        a_s, b_s = specs[0], specs[1]
        batch = []
        for i in range(r - 2):
            cand = a_s[i] if shapes[0][i] == out[i] else None
            if cand is None and shapes[1][i] == out[i]:
                cand = b_s[i]
            batch.append(take(cand))
        m = take(a_s[r - 2])
        n = take(b_s[r - 1])
        k = take(a_s[r - 1] if a_s[r - 1] is not None else b_s[r - 2])
        chosen = {"m": m, "n": n, "k": k, **{f"b{i}": e for i, e in enumerate(batch)}}
        arg_shardings = []
        for j, s in enumerate(shapes):
            dims = self._dims(j, s, out) if len(s) == r else []
            arg_shardings.append(named(mesh, [chosen[name] if full else None for name, full in dims] or [None]))
        out_sharding = named(mesh, batch + [m, n])
        k_axes = axes_of(k)
        if not k_axes:
            return mesh, local, out_sharding, tuple(arg_shardings)
        return mesh, self._k_sharded(params, k_axes), out_sharding, tuple(arg_shardings)

    def _k_sharded(self, params, k_axes):
        import jax
        import jax.numpy as jnp
        from jax import lax

        # The package attribute `matmul` is the public function; fetch the module itself.
        mm = importlib.import_module(f"{__package__}.matmul")
        plain = mm._matmul_p.kernel

        def matmul(a, b):
            return lax.psum(plain.bind(a, b, precision=params["precision"], pad=params["pad"]), k_axes)

        if not self.linear:
            return matmul

        act = {code: name for name, code in mm.ACTIVATIONS.items()}[params["activation"]]

        def linear(a, b, bias, residual):
            y = matmul(a, b).astype(jnp.float32)
            if bias.size:
                y = y + bias.astype(jnp.float32)
            y = {None: lambda v: v, "relu": jax.nn.relu, "silu": jax.nn.silu,
                 "gelu": lambda v: jax.nn.gelu(v, approximate=False),
                 "gelu_tanh": lambda v: jax.nn.gelu(v, approximate=True)}[act](y)
            if residual.size:
                y = y + residual.astype(jnp.float32)
            return y.astype(a.dtype)
        return linear


# ---- softmax / log_softmax -----------------------------------------------------------------------------

class SoftmaxPartitioning:
    """Rows sharded: each device runs the kernel on its rows, no collective. Softmax axis sharded: each
    device computes its slice's per-row (max, sum of exp(x - max)), two all-reduces of those (max, then
    the rescaled sums) give the row's statistics, and each device writes its slice from them. The mask
    follows x's sharding on the dims it does not broadcast along."""

    def __init__(self, log: bool):
        self.log = log

    def rule(self, params, mesh, operand_types, result_types):
        x, mask = (tuple(t.shape) for t in operand_types)
        xf = factor_names(len(x))
        xf[params["axis"]] = "n"
        if len(mask) != len(x):
            m = "e"
        else:
            m = " ".join(f if ms == xs else f"u{i}" for i, (f, ms, xs) in enumerate(zip(xf, mask, x)))
        return f"{' '.join(xf)}, {m} -> {' '.join(xf)}"

    def partition(self, params, local, mesh, arg_shapes, result_shape):
        axis = params["axis"]
        x, mask = arg_shapes
        xs = spec_list(x)
        if len(mask.shape) == len(x.shape):
            ms = [s if m == d else None for s, m, d in zip(xs, mask.shape, x.shape)]
        else:
            ms = [None]
        shardings = (named(mesh, xs), named(mesh, ms))
        n_axes = axes_of(xs[axis])
        fn = self._distributed(axis, n_axes) if n_axes else local
        return mesh, fn, named(mesh, xs), shardings

    def _distributed(self, axis, n_axes):
        import jax.numpy as jnp
        from jax import lax

        sm = importlib.import_module(f"{__package__}.softmax")
        apply = sm._log_apply_p if self.log else sm._apply_p

        def fn(x, mask):
            m_local, s_local = sm._stats_p.bind(x, mask, axis=axis)
            m = lax.pmax(m_local, n_axes)
            # A slice with no live entry has m_local = -inf and contributes nothing (not exp(nan)).
            s = lax.psum(jnp.where(m_local == -jnp.inf, 0.0, s_local * jnp.exp(m_local - m)), n_axes)
            return apply.bind(x, mask, m, s, axis=axis)
        return fn
