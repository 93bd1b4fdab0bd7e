"""The statistics-only and apply-given-statistics entry points (the per-device halves of a sharded
normalised axis) against float64 NumPy, along the last axis: row lengths crossing the row-wise tiers of
cuda/norm/norm_stats_apply.cuh and cuda/softmax/softmax_stats_apply.cuh (lane groups of 1..32, a CTA per
row, the scalar path for n % pack != 0), and stats -> apply composed equals the one-shot op."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_kernels as jk
from jax_kernels import norms
from jax_kernels.softmax import softmax_apply, softmax_stats
from conftest import FLOAT_DTYPES, assert_close, custom_call_targets, randn

F32 = jnp.float32
# 1..64: lane groups; 1025/4097/16385: the scalar path (odd n); 2048, 8192: a CTA per row, 16-byte packs.
LENGTHS = [1, 3, 8, 33, 64, 256, 1025, 2048, 4097, 8192, 16385]


def _rows(n):
    return 3 if n > 4096 else 5


def np_ln_stats(xf):
    mean = xf.mean(-1)
    return mean, ((xf - mean[..., None]) ** 2).sum(-1)


def np_softmax(x64, mask=None, log=False):
    live = np.ones(x64.shape, bool) if mask is None else np.broadcast_to(mask, x64.shape)
    xs = np.where(live, x64, -np.inf)
    with np.errstate(all="ignore"):
        m = np.max(xs, axis=-1, keepdims=True, initial=-np.inf)
        e = np.exp(xs - m)
        s = np.sum(np.where(live, e, 0.0), axis=-1, keepdims=True)
        out = (xs - m) - np.log(s) if log else e / s
    return np.where(live, out, -np.inf if log else 0.0), m[..., 0], s[..., 0]


# ---- LayerNorm / RMSNorm ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
def test_norm_stats(rng, dtype, n):
    x, xf = randn(rng, (_rows(n), n), dtype, loc=3.0)
    mean, m2 = jax.jit(norms.layer_norm_stats)(x)
    em, e2 = np_ln_stats(xf)
    assert_close(mean, em, rtol=1e-5, atol=1e-5)
    assert_close(m2, e2, rtol=1e-4, atol=1e-5 * n)
    assert_close(jax.jit(norms.rms_norm_stats)(x), (xf ** 2).mean(-1), rtol=1e-5, atol=1e-5)


def test_norm_stats_large_mean(rng):
    """Shifted statistics: a mean of 1e4 against a spread of 0.1 keeps the mean and M2."""
    x, xf = randn(rng, (4, 8192), F32, scale=0.1, loc=1e4)
    mean, m2 = norms.layer_norm_stats(x)
    em, e2 = np_ln_stats(xf)
    assert_close(mean, em, rtol=1e-7, atol=0)
    assert_close(m2, e2, rtol=2e-3, atol=0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
def test_norm_apply_and_composition(rng, dtype, n):
    rows = _rows(n)
    x, xf = randn(rng, (rows, n), dtype, loc=1.0)
    s, sf = randn(rng, (n,), dtype)
    b, bf = randn(rng, (n,), dtype)
    em, e2 = np_ln_stats(xf)
    er = 1.0 / np.sqrt(e2 / n + 1e-5)
    y = jax.jit(norms.layer_norm_apply)(x, jnp.asarray(em, F32), jnp.asarray(er, F32), s, b)
    assert_close(y, (xf - em[:, None]) * er[:, None] * sf + bf, dtype, scale=2.0)
    rr = 1.0 / np.sqrt((xf ** 2).mean(-1) + 1e-6)
    y = jax.jit(norms.rms_norm_apply)(x, jnp.asarray(rr, F32), s)
    assert_close(y, xf * rr[:, None] * sf, dtype, scale=2.0)
    y = jax.jit(norms.rms_norm_apply)(x, jnp.asarray(rr, F32))
    assert_close(y, xf * rr[:, None], dtype, scale=2.0)

    # stats -> apply is the one-shot op.
    def composed_ln(x, s, b):
        mean, m2 = norms.layer_norm_stats(x)
        return norms.layer_norm_apply(x, mean, jax.lax.rsqrt(m2 / n + 1e-5), s, b)

    def composed_rms(x, s):
        return norms.rms_norm_apply(x, jax.lax.rsqrt(norms.rms_norm_stats(x) + 1e-6), s)

    assert_close(jax.jit(composed_ln)(x, s, b), jk.layer_norm(x, s, b), dtype, scale=2.0)
    assert_close(jax.jit(composed_rms)(x, s), jk.rms_norm(x, s), dtype, scale=2.0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_norm_misaligned(rng, dtype):
    """A slice at an odd offset inside jit (the operand may start mid-pack)."""
    n = 1024
    x, xf = randn(rng, (4 * n + 1,), dtype, loc=2.0)
    em, e2 = np_ln_stats(xf[1:].reshape(4, n))
    mean, m2 = jax.jit(lambda x: norms.layer_norm_stats(x[1:].reshape(4, n)))(x)
    assert_close(mean, em, rtol=1e-5, atol=1e-5)
    assert_close(m2, e2, rtol=1e-4, atol=1e-5 * n)
    er = 1.0 / np.sqrt(e2 / n + 1e-5)
    y = jax.jit(lambda x, m, r: norms.layer_norm_apply(x[1:].reshape(4, n), m, r))(
        x, jnp.asarray(em, F32), jnp.asarray(er, F32))
    assert_close(y, (xf[1:].reshape(4, n) - em[:, None]) * er[:, None], dtype, scale=2.0)


@pytest.mark.parametrize("n", [64, 4096])
def test_norm_apply_batched_params(rng, n):
    """vmap over x, statistics, scale and bias: one call with per-group parameter rows."""
    B, rows = 3, 4
    x, xf = randn(rng, (B, rows, n), jnp.bfloat16)
    s, sf = randn(rng, (B, n), jnp.bfloat16)
    b, bf = randn(rng, (B, n), jnp.bfloat16)
    em, e2 = np_ln_stats(xf)
    er = 1.0 / np.sqrt(e2 / n + 1e-5)
    f = jax.vmap(norms.layer_norm_apply)
    y = f(x, jnp.asarray(em, F32), jnp.asarray(er, F32), s, b)
    assert_close(y, (xf - em[..., None]) * er[..., None] * sf[:, None] + bf[:, None], jnp.bfloat16, scale=2.0)
    targets = custom_call_targets(f, x, jnp.asarray(em, F32), jnp.asarray(er, F32), s, b)[0]
    assert targets == ["jk_layer_norm_apply"]
    g = jax.vmap(lambda x, r, s: norms.rms_norm_apply(x, r, s), in_axes=(0, 0, 0))
    rr = 1.0 / np.sqrt((xf ** 2).mean(-1) + 1e-6)
    assert_close(g(x, jnp.asarray(rr, F32), s), xf * rr[..., None] * sf[:, None], jnp.bfloat16, scale=2.0)


def test_norm_zero_size_and_nan_rows(rng):
    x = jnp.zeros((0, 64), F32)
    mean, m2 = norms.layer_norm_stats(x)
    assert mean.shape == (0,) and m2.shape == (0,)
    assert norms.layer_norm_apply(x, jnp.zeros((0,), F32), jnp.zeros((0,), F32)).shape == (0, 64)
    assert norms.rms_norm_apply(jnp.zeros((3, 0), F32), jnp.ones((3,), F32)).shape == (3, 0)
    for n in (33, 8192):
        x, xf = randn(rng, (4, n), jnp.bfloat16)
        x = x.at[1, n // 2].set(jnp.nan)
        mean, m2 = norms.layer_norm_stats(x)
        ms = norms.rms_norm_stats(x)
        for v in (mean, m2, ms):
            v = np.asarray(v)
            assert np.isnan(v[1]) and np.all(np.isfinite(v[[0, 2, 3]]))
        y = np.asarray(norms.layer_norm_apply(x, mean, jax.lax.rsqrt(m2 / n + 1e-5)).astype(F32))
        assert np.all(np.isnan(y[1])) and np.all(np.isfinite(y[[0, 2, 3]]))


# ---- softmax ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("mask_kind", [None, "full", "row"])
def test_softmax_stats_apply(rng, dtype, n, mask_kind):
    rows = _rows(n)
    x, x64 = randn(rng, (rows, n), dtype, scale=2.0)
    mask = None
    if mask_kind == "full":
        mask = rng.random((rows, n)) < 0.7
        mask[:, 0] = True
    elif mask_kind == "row":  # broadcast along the axis: (rows, 1)
        mask = np.ones((rows, 1), bool)
        mask[1, 0] = False  # row 1 fully masked: (-inf, 0), outputs 0 / -inf
    where = None if mask is None else jnp.asarray(mask)
    ey, em, es = np_softmax(x64, mask)
    m, s = jax.jit(lambda x, w: softmax_stats(x, where=w))(x, where)
    assert_close(m, em, rtol=0, atol=0)
    assert_close(s, es, rtol=1e-5, atol=0)
    for log in (False, True):
        ey = np_softmax(x64, mask, log)[0]
        f = jax.jit(lambda x, m, s, w: softmax_apply(x, m, s, where=w, log=log))
        y = f(x, jnp.asarray(em, F32), jnp.asarray(es, F32), where)
        assert_close(y, ey, dtype, scale=2.0)
        composed = jax.jit(lambda x, w: softmax_apply(x, *softmax_stats(x, where=w), where=w, log=log))(x, where)
        one_shot = (jk.log_softmax if log else jk.softmax)(x, where=where)
        assert_close(composed, one_shot, dtype, scale=2.0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_softmax_misaligned(rng, dtype):
    n = 1024
    x, x64 = randn(rng, (4 * n + 1,), dtype)
    xs64 = x64[1:].reshape(4, n)
    ey, em, es = np_softmax(xs64)
    m, s = jax.jit(lambda x: softmax_stats(x[1:].reshape(4, n)))(x)
    assert_close(m, em, rtol=0, atol=0)
    assert_close(s, es, rtol=1e-5, atol=0)
    y = jax.jit(lambda x, m, s: softmax_apply(x[1:].reshape(4, n), m, s, log=True))(
        x, jnp.asarray(em, F32), jnp.asarray(es, F32))
    assert_close(y, np_softmax(xs64, log=True)[0], dtype, scale=2.0)


def test_softmax_zero_size_and_degenerate_rows(rng):
    m, s = softmax_stats(jnp.zeros((3, 0), F32))
    assert np.all(np.asarray(m) == -np.inf) and np.all(np.asarray(s) == 0)
    m, s = softmax_stats(jnp.zeros((0, 16), F32))
    assert m.shape == (0,) and s.shape == (0,)
    assert softmax_apply(jnp.zeros((0, 16), F32), m, s).shape == (0, 16)
    for n in (33, 8192):
        x, x64 = randn(rng, (5, n), jnp.bfloat16)
        x = x.at[1, 3].set(jnp.nan).at[2, 5].set(jnp.inf).at[3, :].set(-jnp.inf)
        mask = np.ones((5, n), bool)
        mask[4, :] = False
        m, s = softmax_stats(x, where=jnp.asarray(mask))
        m, s = np.asarray(m), np.asarray(s)
        assert np.isfinite(m[0]) and np.isfinite(s[0]) and np.isnan(s[1])
        assert m[2] == np.inf and m[3] == -np.inf and m[4] == -np.inf and s[4] == 0
        for log in (False, True):
            y = np.asarray(softmax_apply(x, jnp.asarray(m), jnp.asarray(s), where=jnp.asarray(mask), log=log)
                           .astype(F32))
            assert np.all(np.isfinite(y[0]))
            assert np.all(np.isnan(y[1:4]))
            assert np.all(y[4] == (-np.inf if log else 0.0))
