"""Pure jax.numpy versions of every op: what a user would write without this package.

They are the benchmark baselines and the cross-checks in the tests (the tests' oracles proper are
float64 NumPy). They are never used as a silent fallback inside an op.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax


def layer_norm(x, scale=None, bias=None, *, axis=-1, epsilon=1e-5, return_stats=False):
    """LayerNorm with float32 statistics (two-pass: mean, then mean of squared deviations)."""
    xf = x.astype(jnp.float32)
    mean = jnp.mean(xf, axis=axis, keepdims=True)
    var = jnp.mean(jnp.square(xf - mean), axis=axis, keepdims=True)
    rstd = lax.rsqrt(var + epsilon)
    y = (xf - mean) * rstd
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    if scale is not None:
        y = y * scale.astype(jnp.float32).reshape(shape)
    if bias is not None:
        y = y + bias.astype(jnp.float32).reshape(shape)
    y = y.astype(x.dtype)
    if return_stats:
        return y, jnp.squeeze(mean, axis), jnp.squeeze(rstd, axis)
    return y


def rms_norm(x, scale=None, *, axis=-1, epsilon=1e-6):
    """``x * rsqrt(mean(x^2) + eps) * scale`` with float32 statistics."""
    xf = x.astype(jnp.float32)
    y = xf * lax.rsqrt(jnp.mean(jnp.square(xf), axis=axis, keepdims=True) + epsilon)
    if scale is not None:
        shape = [1] * x.ndim
        shape[axis] = x.shape[axis]
        y = y * scale.astype(jnp.float32).reshape(shape)
    return y.astype(x.dtype)


def softmax(x, axis=-1, where=None):
    return jax.nn.softmax(x, axis=axis, where=where)


def log_softmax(x, axis=-1, where=None):
    return jax.nn.log_softmax(x, axis=axis, where=where)


def transpose(x, axes=None):
    return jnp.transpose(x, axes)


def matmul(a, b, *, precision=None):
    return jnp.matmul(a, b, precision=precision)


_ACTIVATIONS = {
    None: lambda y: y,
    "relu": jax.nn.relu,
    "gelu": lambda y: jax.nn.gelu(y, approximate=False),
    "gelu_tanh": lambda y: jax.nn.gelu(y, approximate=True),
    "silu": jax.nn.silu,
}


def linear(x, w, bias=None, *, activation=None, residual=None, precision=None):
    """``activation(x @ w + bias) + residual`` as a user composes it in jnp."""
    y = jnp.matmul(x, w, precision=precision)
    if bias is not None:
        y = y + bias
    y = _ACTIVATIONS[activation](y)
    if residual is not None:
        y = y + residual
    return y
