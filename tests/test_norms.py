"""LayerNorm / RMSNorm against float64 NumPy, on whichever backend JAX has.

Row lengths cross every CUDA tier boundary (cuda/norm/norm_launch.cu): lane groups of 1..32 threads
(n <= 2048; 1024 for bf16/f16 LayerNorm), a CTA per row in registers (up to 16383; float32 RMSNorm 16384),
the two-read kernel (n >= 16384, and misaligned rows beyond the lane groups), the scalar path (n % (16 / itemsize) != 0) and
the strided kernel (a non-last axis). With JK_NORM_TIER=proposed (bench/lab/norm_half_gpu.sh runs the row
tests a second time so) the same lengths cross the bulk-copy tier's boundaries: sm_90, rows of up to
32 KB beyond the lane groups (n <= 8192 for float32, n <= 16384 for bf16/f16). Vectorised bf16/f16 rows of
513-32768 columns take the packed row tier by default (cuda/norm/norm_packed_block.cuh: 16, 32 or 64 elements
per thread by row length and op); JK_NORM_TIER='pblock E' / 'pwarp E B' force one configuration wherever the
row fits it, JK_NORM_TIER=legacy the dispatch before it (bench/lab/norm_packed_block_gpu.sh runs the 16-bit
row tests under each).
"""
from __future__ import annotations


import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, strategies as st

import jax_kernels as jk
from jax_kernels import norms
from conftest import FLOAT_DTYPES, ON_GPU, assert_close, custom_call_targets, randn


# ---- float64 references ----------------------------------------------------------------------------
def np_layer_norm(x, scale=None, bias=None, axis=-1, eps=1e-5):
    mean = x.mean(axis=axis, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axis, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    y = (x - mean) * rstd
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    if scale is not None:
        y = y * scale.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y, np.squeeze(mean, axis), np.squeeze(rstd, axis)


def np_rms_norm(x, scale=None, axis=-1, eps=1e-6):
    y = x / np.sqrt((x ** 2).mean(axis=axis, keepdims=True) + eps)
    if scale is not None:
        shape = [1] * x.ndim
        shape[axis] = x.shape[axis]
        y = y * scale.reshape(shape)
    return y


def _params(rng, n, dtype, with_scale, with_bias):
    s = randn(rng, (n,), dtype, scale=0.5, loc=1.0) if with_scale else (None, None)
    b = randn(rng, (n,), dtype, scale=0.5) if with_bias else (None, None)
    return s, b


# Row lengths: the float32 short-row tier (12 = 3 packs with a padding lane, 32, 100, 128), the bf16/f16
# packed short-row tier (32 ... 512, 384 and 768, LayerNorm 1024 and 1536; float32 16, 32, 128, 192, LayerNorm
# 64 ... 1024, 384 and 768; rows of 6 and 12 packs since session 33: 16-bit 48 and 96, float32 24 and 48; the
# packed tier also builds rows of 10 / 20 / 40 packs (16-bit 80 / 160 / 320, float32 40 / 80 / 160) and 14 / 28 / 56
# (16-bit 112 / 224 / 448, float32 56 / 112 / 224) with 5 or 7 packs a lane ('packed 5' / 'packed 7');
# JK_NORM_TIER='packed C [R]' forces it where it is not the default; 45 rows of 32, 48, 96 and 128
# leave the last warp's second row group partly or wholly past the end where R = 2 rows a lane group), lane groups
# (1, 8, 32, 100, 128, 1000, 2048), scalar path (3, 33, 513, 1025, 2049, 4097,
# 16383), a CTA per row in registers (1032 for half LayerNorm, 2052/2056 just past the float32 and half
# RMSNorm lane groups, 4096 ... 12288, 16384 = 2 * 8192 for bf16/f16), two reads (16392, 40000, 65536,
# 131080). The bulk tier (JK_NORM_TIER=proposed) takes 2052 ... 8192 for float32 (8200 just past its
# limit) and 1032 (LayerNorm) / 2056 (RMSNorm) ... 16384 for bf16/f16 (16392 just past).
# The packed 16-bit row tier (norm_packed_block.cuh; JK_NORM_TIER='pblock E' / 'pwarp E B' force a
# configuration) holds rows of 8-column packs, E / 8 per thread: 512 (a full warp of 2 packs), 520 (65 packs,
# one past a warp of 2 and odd), 1016 (127, odd, one short of a warp of 4), 1024, 2040, 4104 (513: past 256
# threads of 2 packs), 8184 (1023), 16376 (2047: 512 threads of 4, the last partly filled), 16392 (2049: past
# 512 threads of 4, 257 of 8), 32760 (4095), 32768 (the longest: 512 threads of 8), 32776 (4097: past it).
# Session 19: float32 LayerNorm's register tier capped at 64 registers (1536, 2040, 2052, 2560, 3072, 8200, 12288,
# 16376), with 2048 and 4096 ... 8192 (5120, 6144) on its old tiers; RMSNorm float32 on two reads below 28672
# (16392, 24576) and the hybrid tier's narrower span (49152: clusters of 4 x 192 threads).
# Session 39: bf16/f16 rows of 32 columns take the one-pack lanes (norm_short_onepack.cuh: CTAs of 64 rows, 2 rows a
# thread 32 apart): 1, 6, 45, 64, 65 and 1025 rows leave a CTA's second half, its last rows, or a whole CTA but one row
# past the end. Session 40: every CTA whole (a ragged grid's last CTA moved back over its neighbour's rows, storing
# only its own), below a CTA's rows the packed tier; float32 at 32 columns (CTAs of 64 rows, 4 rows a thread 16 apart)
# and 16-bit LayerNorm at 128 (CTAs of 128 rows, 8 rows a thread 16 apart; whole grids without statistics only) too:
# 7, 45, 128, 129, 256 and 1000 rows of 128. Session 42: float32 at 32 columns in CTAs of 32 rows (2 rows a thread 16
# apart): 31, 32 and 33 rows; 16-bit rows of 64 columns on the same layout: 31, 37, 64 and 97 rows of 64 (float32 64:
# 16 lanes x 4 rows, CTAs of 32 rows); float32 16 on the 4-lane layout (CTAs of 64 rows): 63, 65 and 1025 rows of 16.
ROW_CASES = [(7, 1), (5, 3), (9, 8), (5, 12), (63, 16), (65, 16), (1025, 16), (37, 24), (1, 32), (6, 32), (31, 32), (32, 32), (33, 32), (45, 32),
             (64, 32), (65, 32), (1025, 32),
             (3, 33), (37, 40), (45, 48), (37, 56),
             (31, 64), (37, 64), (64, 64), (97, 64), (45, 80), (45, 96), (5, 100), (37, 112), (7, 128), (45, 128), (128, 128), (129, 128), (256, 128), (1000, 128), (5, 160), (5, 224), (3, 320),
             (3, 448),
             (5, 192), (3, 256),
             (5, 384), (3, 512), (3, 513), (3, 520), (5, 768), (4, 1000), (3, 1016), (3, 1024), (3, 1025), (3, 1032),
             (3, 1536), (3, 2040), (3, 2048), (2, 2049), (2, 2052), (2, 2056), (3, 2560), (3, 3072), (3, 4096),
             (2, 4097), (3, 4104), (2, 5120), (2, 6144), (2, 8184), (2, 8192), (2, 8200), (2, 12288), (2, 16376),
             (2, 16383), (2, 16384), (2, 16392), (2, 24576), (2, 32760), (2, 32768), (2, 32776), (2, 40000),
             (2, 49152), (2, 65536), (1, 131080)]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("rows,n", ROW_CASES)
def test_layer_norm_rows(rng, dtype, rows, n):
    x, xf = randn(rng, (rows, n), dtype, scale=2.0, loc=0.5)
    (s, sf), (b, bf) = _params(rng, n, dtype, True, True)
    y, mean, rstd = jax.jit(lambda x, s, b: jk.layer_norm(x, s, b, return_stats=True))(x, s, b)
    ey, em, er = np_layer_norm(xf, sf, bf)
    assert y.dtype == dtype and mean.dtype == jnp.float32 and rstd.dtype == jnp.float32
    assert mean.shape == (rows,) and rstd.shape == (rows,)
    assert_close(y, ey, dtype, scale=2.0)
    assert_close(mean, em, jnp.float32, scale=4.0)
    assert_close(rstd, er, jnp.float32, scale=4.0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("rows,n", ROW_CASES)
def test_rms_norm_rows(rng, dtype, rows, n):
    x, xf = randn(rng, (rows, n), dtype, scale=2.0, loc=0.5)
    (s, sf), _ = _params(rng, n, dtype, True, False)
    y = jax.jit(jk.rms_norm)(x, s)
    assert y.dtype == dtype
    assert_close(y, np_rms_norm(xf, sf), dtype, scale=2.0)


# Rows of n % P != 0 (session 32, norm_window.cuh; by default past the lane groups' rows, JK_NORM_WINDOW=1 forces it
# onto those too): a warp per row up to 256 packs in the widest window (float32 1021, 16-bit 2034 columns), a CTA per
# row up to 4096 packs (float32 16381, 16-bit 32762), two reads past that (float32 16385, 16-bit 32765); 37 rows start
# at every offset within a pack, so the edge packs come at every position. JK_NORM_WINDOW=0: the scalar tiers before.
WINDOW_ROWS = [(37, 3), (37, 97), (37, 1001), (37, 1021), (37, 1023), (37, 2035), (37, 4099), (9, 16381), (9, 16385),
               (5, 32762), (5, 32765)]


@pytest.mark.parametrize("window", ["1", "0"] if ON_GPU else ["1"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("rows,n", WINDOW_ROWS)
def test_norm_window_rows(rng, monkeypatch, window, dtype, rows, n):
    monkeypatch.setenv("JK_NORM_WINDOW", window)
    x, xf = randn(rng, (rows, n), dtype, scale=2.0, loc=0.5)
    (s, sf), (b, bf) = _params(rng, n, dtype, True, True)
    y, mean, rstd = jax.jit(lambda x, s, b: jk.layer_norm(x, s, b, return_stats=True))(x, s, b)
    ey, em, er = np_layer_norm(xf, sf, bf)
    assert_close(y, ey, dtype, scale=2.0)
    assert_close(mean, em, jnp.float32, scale=4.0)
    assert_close(rstd, er, jnp.float32, scale=4.0)
    assert_close(jax.jit(lambda x: jk.layer_norm(x))(x), np_layer_norm(xf)[0], dtype, scale=2.0)
    assert_close(jax.jit(jk.rms_norm)(x, s), np_rms_norm(xf, sf), dtype, scale=2.0)


@pytest.mark.parametrize("with_scale,with_bias", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_optional_params(rng, dtype, with_scale, with_bias):
    x, xf = randn(rng, (6, 256), dtype)
    (s, sf), (b, bf) = _params(rng, 256, dtype, with_scale, with_bias)
    assert_close(jk.layer_norm(x, s, b), np_layer_norm(xf, sf, bf)[0], dtype)
    if not with_bias:
        assert_close(jk.rms_norm(x, s), np_rms_norm(xf, sf), dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape,axis", [((4, 33, 5), 1), ((3, 4, 5, 6), 0), ((2, 7, 3, 64), -2),
                                        ((5, 2), 0), ((2, 300, 40), 1), ((3, 5, 1, 2), 2)])
def test_non_last_axis(rng, dtype, shape, axis):
    x, xf = randn(rng, shape, dtype, loc=1.0)
    n = shape[axis]
    (s, sf), (b, bf) = _params(rng, n, dtype, True, True)
    y, mean, rstd = jk.layer_norm(x, s, b, axis=axis, return_stats=True)
    ey, em, er = np_layer_norm(xf, sf, bf, axis=axis)
    assert_close(y, ey, dtype)
    assert_close(mean, em, jnp.float32, scale=4.0)
    assert_close(rstd, er, jnp.float32, scale=4.0)
    assert_close(jk.rms_norm(x, s, axis=axis), np_rms_norm(xf, sf, axis=axis), dtype)


def test_epsilon_and_constant_rows(rng):
    x = jnp.full((3, 64), 2.5, jnp.float32)
    y, mean, rstd = jk.layer_norm(x, epsilon=0.25, return_stats=True)
    np.testing.assert_allclose(np.asarray(y), 0.0)
    np.testing.assert_allclose(np.asarray(rstd), 2.0)
    x, xf = randn(rng, (4, 50), jnp.float32)
    assert_close(jk.rms_norm(x, epsilon=0.3), np_rms_norm(xf, eps=0.3), jnp.float32)


def test_large_mean_small_variance(rng):
    """Two-pass / Welford statistics survive where the naive E[x^2] - E[x]^2 cancels to garbage."""
    for n in (32, 64, 1024, 2052, 8192, 12288, 131080):   # every row tier
        xf = (1e4 + rng.standard_normal((2, n)) * 1e-1).astype(np.float32)
        y, mean, rstd = jk.layer_norm(jnp.asarray(xf), return_stats=True)
        ey, em, er = np_layer_norm(xf.astype(np.float64))
        assert_close(rstd, er, rtol=1e-3, atol=0)
        assert_close(np.ravel(mean), np.ravel(em), rtol=2e-7, atol=0)   # within ~1 float32 ulp
        assert_close(y, ey, rtol=1e-2, atol=1e-2)
    # The strided tier (a non-last axis).
    xf = (1e4 + rng.standard_normal((3, 4096, 5)) * 1e-1).astype(np.float32)
    y = jk.layer_norm(jnp.asarray(xf), axis=1)
    assert_close(y, np_layer_norm(xf.astype(np.float64), axis=1)[0], rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
@pytest.mark.parametrize("n", [32, 64, 128, 256, 1024])
def test_large_mean_16bit_rows(rng, dtype, n):
    """16-bit rows near 1000 that differ by a few ulps (bf16 steps of 4, f16 of 0.5: |mean| / std 100-1000) on the
    packed short-row widths: the mean keeps float32 accuracy and y its 16-bit one, whatever form the statistics take
    (the row shift, or a shift-free form that must fall back on such rows)."""
    step = 4.0 if dtype == jnp.bfloat16 else 0.5  # one ulp at 1000
    xf = (1000.0 + step * rng.integers(-3, 4, (37, n))).astype(np.float32)
    x = jnp.asarray(xf, dtype)
    assert np.array_equal(np.asarray(x, np.float32), xf)  # exactly representable
    (s, sf), (b, bf) = _params(rng, n, dtype, True, True)
    y, mean, rstd = jax.jit(lambda x, s, b: jk.layer_norm(x, s, b, return_stats=True))(x, s, b)
    ey, em, er = np_layer_norm(xf.astype(np.float64), sf, bf)
    assert_close(np.ravel(mean), np.ravel(em), rtol=2e-7, atol=0)  # within ~1 float32 ulp
    assert_close(rstd, er, rtol=1e-4, atol=0)
    assert_close(y, ey, dtype, scale=2.0)


@pytest.mark.parametrize("dtype,n", [(jnp.float32, 16), (jnp.float32, 32), (jnp.float32, 64), (jnp.bfloat16, 32),
                                     (jnp.float16, 32), (jnp.bfloat16, 64), (jnp.float16, 64), (jnp.bfloat16, 128),
                                     (jnp.float16, 128)])
@pytest.mark.parametrize("rows", [256, 257])
def test_large_mean_one_pack_rows(rng, dtype, n, rows):
    """Rows of a large mean on the one-pack lanes' widths, in grids they take (test_large_mean_small_variance's 2 rows
    and test_large_mean_16bit_rows' 37 are below a CTA there, CTAs of 32-128 rows): 256 rows (whole CTAs) and 257 (a
    ragged grid; 16-bit LayerNorm 128 then takes the packed tier). Their two passes run without the row shift: float32
    rows at |mean| / std = 1e5, 16-bit rows near 1000 a few ulps apart, the mean to float32 accuracy. y is checked from
    the call without statistics too (16-bit LayerNorm 128 with statistics takes the packed tier)."""
    if dtype == jnp.float32:
        xf = (1e4 + rng.standard_normal((rows, n)) * 1e-1).astype(np.float32)
    else:
        step = 4.0 if dtype == jnp.bfloat16 else 0.5  # one ulp at 1000
        xf = (1000.0 + step * rng.integers(-3, 4, (rows, n))).astype(np.float32)
    x = jnp.asarray(xf, dtype)
    assert np.array_equal(np.asarray(x, np.float32), xf)  # exactly representable
    y, mean, rstd = jax.jit(lambda x: jk.layer_norm(x, return_stats=True))(x)
    ey, em, er = np_layer_norm(xf.astype(np.float64))
    assert_close(np.ravel(mean), np.ravel(em), rtol=2e-7, atol=0)  # within ~1 float32 ulp
    assert_close(rstd, er, rtol=1e-3 if dtype == jnp.float32 else 1e-4, atol=0)
    for out in (y, jax.jit(jk.layer_norm)(x)):
        if dtype == jnp.float32:
            assert_close(out, ey, rtol=1e-2, atol=1e-2)
        else:
            assert_close(out, ey, dtype, scale=2.0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("rows,n", [(97, 16), (97, 32), (256, 32), (97, 64), (256, 128)])
@pytest.mark.parametrize("with_scale,with_bias", [(False, False), (True, False), (False, True), (True, True)])
def test_one_pack_rows_params_and_stats(rng, dtype, rows, n, with_scale, with_bias):
    """The one-pack lanes (16-bit rows of 32, 64 and 128 columns, float32 of 16, 32 and 64) with each parameter absent
    or present, statistics returned, and RMSNorm beside it; 97 rows of 16, 32 or 64: a ragged grid (the last CTA moved
    back), 256: whole CTAs; 256 of 128: two whole CTAs (with statistics: the packed tier; float32 128 columns and
    16-bit 16 take other tiers: the same checks)."""
    x, xf = randn(rng, (rows, n), dtype, scale=3.0, loc=-1.0)
    (s, sf), (b, bf) = _params(rng, n, dtype, with_scale, with_bias)
    y, mean, rstd = jax.jit(lambda x, s, b: jk.layer_norm(x, s, b, return_stats=True))(x, s, b)
    ey, em, er = np_layer_norm(xf, sf, bf)
    assert_close(y, ey, dtype, scale=2.0)
    assert_close(mean, em, jnp.float32, scale=4.0)
    assert_close(rstd, er, jnp.float32, scale=4.0)
    assert_close(jax.jit(jk.rms_norm)(x, s), np_rms_norm(xf, sf), dtype, scale=2.0)


@pytest.mark.parametrize("n", [192, 384, 768, 1536])
def test_large_mean_float16_one_step(rng, n):
    """float16 rows of 1000 with one element one ulp above (|mean| / std 2.5e4-7e4) at the packed widths that are not
    powers of two: a mean rounded to float32 (1000 + 0.5 / n is not exact) shifts every output by up to 0.004, which
    these tolerances (0.001 + 0.001 |y|) catch. The CPU handlers and the CUDA short-row tier (which takes these widths)
    subtract the shift and the shifted mean apart, keeping the outputs to their float16 rounding."""
    xf = np.full((37, n), 1000.0, np.float32)
    xf[np.arange(37), rng.integers(0, n, 37)] = 1000.5
    y, mean, _ = jax.jit(lambda x: jk.layer_norm(x, return_stats=True))(jnp.asarray(xf, jnp.float16))
    ey, em, _ = np_layer_norm(xf.astype(np.float64))
    assert_close(np.ravel(mean), np.ravel(em), rtol=2e-7, atol=0)
    assert_close(y, ey, rtol=1e-3, atol=1e-3)


def test_float16_large_values(rng):
    """float16 x whose squares overflow float16: float32 statistics keep the result finite and right."""
    x, xf = randn(rng, (4, 512), jnp.float16, scale=3000.0)
    assert_close(jk.rms_norm(x), np_rms_norm(xf), jnp.float16)
    assert_close(jk.layer_norm(x), np_layer_norm(xf)[0], jnp.float16)


# ---- transformations -----------------------------------------------------------------------------
def _count_prims(jaxpr, name):
    count = 0
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == name:
            count += 1
        for sub in jax.core.subjaxprs(eqn) if hasattr(jax.core, "subjaxprs") else []:
            count += _count_prims(sub, name)
        for v in eqn.params.values():
            if hasattr(v, "jaxpr") and hasattr(v.jaxpr, "eqns"):
                count += _count_prims(v.jaxpr, name)
    return count


def _check_one_call(f, args, target):
    closed = jax.make_jaxpr(f)(*args)
    assert _count_prims(closed.jaxpr, target) == 1, closed
    text = jax.jit(f).lower(*args).as_text()
    assert text.count(f"custom_call @{target}(") == 1
    assert "stablehlo.while" not in text


@pytest.mark.parametrize("xa,sa,ba", [(0, None, None), (1, None, None), (2, None, None), (0, 0, None),
                                      (1, 0, 0), (2, None, 0), (None, 0, None), (None, 0, 0), (0, None, 0),
                                      (1, 0, None), (2, 0, 0)])
def test_vmap_layer_norm(rng, xa, sa, ba):
    B, shape, n = 3, (4, 5, 16), 16  # normalised axis: -1 of the per-example x
    xs = shape[:xa] + (B,) + shape[xa:] if xa is not None else shape
    x, xf = randn(rng, xs, jnp.float32)
    s, sf = randn(rng, (B, n) if sa is not None else (n,), jnp.float32, loc=1.0)
    b, bf = randn(rng, (B, n) if ba is not None else (n,), jnp.float32)
    f = jax.vmap(lambda x, s, b: jk.layer_norm(x, s, b, return_stats=True), in_axes=(xa, sa, ba))
    y, mean, rstd = f(x, s, b)
    for i in range(B):
        xi = np.take(xf, i, axis=xa) if xa is not None else xf
        ey, em, er = np_layer_norm(xi, sf[i] if sa is not None else sf, bf[i] if ba is not None else bf)
        assert_close(y[i], ey, jnp.float32)
        assert_close(mean[i], em, jnp.float32, scale=4.0)
        assert_close(rstd[i], er, jnp.float32, scale=4.0)
    _check_one_call(f, (x, s, b), "jk_layer_norm")


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("xa,sa", [(0, None), (1, 0), (2, 0), (None, 0), (3, 0)])
def test_vmap_rms_norm_any_axis(rng, axis, xa, sa):
    B, shape = 2, (3, 4, 5)
    xs = shape[:xa] + (B,) + shape[xa:] if xa is not None else shape
    x, xf = randn(rng, xs, jnp.float16)
    n = shape[axis]
    s, sf = randn(rng, (B, n) if sa is not None else (n,), jnp.float16, loc=1.0)
    f = jax.vmap(lambda x, s: jk.rms_norm(x, s, axis=axis), in_axes=(xa, sa))
    y = f(x, s)
    for i in range(B):
        xi = np.take(xf, i, axis=xa) if xa is not None else xf
        assert_close(y[i], np_rms_norm(xi, sf[i] if sa is not None else sf, axis=axis), jnp.float16)
    _check_one_call(f, (x, s), "jk_rms_norm")


def test_nested_vmap_batched_params(rng):
    """vmap(vmap) with scale batched on both levels: the (G, n) grouping composes, still one call."""
    A, B, R, n = 2, 3, 4, 8
    x, xf = randn(rng, (B, R, A, n), jnp.bfloat16)
    s, sf = randn(rng, (A, B, n), jnp.bfloat16, loc=1.0)
    b, bf = randn(rng, (n, B), jnp.bfloat16)
    inner = jax.vmap(lambda x, s, b: jk.layer_norm(x, s, b), in_axes=(0, 0, 1))   # over B
    f = jax.vmap(inner, in_axes=(2, 0, None))                                     # over A
    y = f(x, s, b)
    assert y.shape == (A, B, R, n)
    for a in range(A):
        for i in range(B):
            ey = np_layer_norm(xf[i, :, a], sf[a, i], bf[:, i])[0]
            assert_close(y[a, i], ey, jnp.bfloat16)
    _check_one_call(f, (x, s, b), "jk_layer_norm")


def test_jaxpr_and_hlo(rng):
    x, _ = randn(rng, (8, 128), jnp.float32)
    s, _ = randn(rng, (128,), jnp.float32)
    for fn, name in [(lambda x: jk.layer_norm(x, s, s), "jk_layer_norm"), (lambda x: jk.rms_norm(x, s), "jk_rms_norm")]:
        assert name in str(jax.make_jaxpr(fn)(x))
        targets, text = custom_call_targets(fn, x)
        assert targets == [name]
        for op in ("stablehlo.reduce", "stablehlo.rsqrt", "stablehlo.transpose", "stablehlo.dot_general"):
            assert op not in text


# ---- bad input ------------------------------------------------------------------------------------
def test_bad_inputs():
    x = jnp.ones((4, 8), jnp.float32)
    with pytest.raises(TypeError, match="layer_norm: argument 'x'"):
        jk.layer_norm(jnp.ones((4, 8), jnp.int32))
    with pytest.raises(TypeError, match="rms_norm: argument 'x'"):
        jk.rms_norm([1.0, 2.0])
    with pytest.raises(ValueError, match="layer_norm: argument 'x'.*scalar"):
        jk.layer_norm(jnp.float32(1.0))
    with pytest.raises(ValueError, match="layer_norm: argument 'axis'"):
        jk.layer_norm(x, axis=2)
    with pytest.raises(TypeError, match="rms_norm: argument 'axis'"):
        jk.rms_norm(x, axis=1.0)
    with pytest.raises(ValueError, match=r"layer_norm: argument 'scale': expected shape \(8,\)"):
        jk.layer_norm(x, jnp.ones((4,), jnp.float32))
    with pytest.raises(ValueError, match="rms_norm: argument 'scale'"):
        jk.rms_norm(x, jnp.ones((1, 8), jnp.float32))
    with pytest.raises(TypeError, match="layer_norm: argument 'bias': expected dtype float32"):
        jk.layer_norm(x, None, jnp.ones((8,), jnp.bfloat16))
    with pytest.raises(TypeError, match="rms_norm: argument 'scale': expected dtype bfloat16"):
        jk.rms_norm(x.astype(jnp.bfloat16), jnp.ones((8,), jnp.float32))
    with pytest.raises(ValueError, match="layer_norm: argument 'epsilon'"):
        jk.layer_norm(x, epsilon=-1.0)
    with pytest.raises(ValueError, match="rms_norm: argument 'epsilon'"):
        jk.rms_norm(x, epsilon=float("nan"))
    with pytest.raises(TypeError, match="layer_norm: argument 'return_stats'"):
        jk.layer_norm(x, return_stats="yes")
    with pytest.raises(ValueError, match="layer_norm_apply: argument 'mean'"):
        norms.layer_norm_apply(x, jnp.ones((8,)), jnp.ones((4,)))
    with pytest.raises(TypeError, match="rms_norm_apply: argument 'rstd'"):
        norms.rms_norm_apply(x, jnp.ones((4,), jnp.bfloat16))


def _call(target, outs, *args, **attrs):
    return jax.ffi.ffi_call(target, outs)(*args, **attrs)


F32 = jnp.float32
EPS, AX = np.float32(1e-5), np.int64(-1)


@pytest.mark.parametrize("case", [
    "x_int", "y_shape", "y_dtype", "scale_shape", "scale_dtype", "scale_groups", "axis", "epsilon",
    "mean_shape", "mean_dtype", "x_scalar", "rms_scale", "stats_shape", "apply_rstd"])
def test_handler_validation(case):
    x = jnp.ones((4, 8), F32)
    sd = jax.ShapeDtypeStruct
    empty = jnp.zeros((0,), F32)
    ln_outs = (sd((4, 8), F32), sd((4,), F32), sd((4,), F32))
    calls = {
        "x_int": lambda: _call("jk_layer_norm", (sd((4, 8), jnp.int32), sd((0,), F32), sd((0,), F32)),
                               x.astype(jnp.int32), jnp.zeros((0,), jnp.int32), jnp.zeros((0,), jnp.int32),
                               epsilon=EPS, axis=AX),
        "y_shape": lambda: _call("jk_layer_norm", (sd((4, 9), F32),) + ln_outs[1:], x, empty, empty,
                                 epsilon=EPS, axis=AX),
        "y_dtype": lambda: _call("jk_rms_norm", sd((4, 8), jnp.float16), x, empty, epsilon=EPS, axis=AX),
        "scale_shape": lambda: _call("jk_layer_norm", ln_outs, x, jnp.ones((1, 7), F32), empty,
                                     epsilon=EPS, axis=AX),
        "scale_dtype": lambda: _call("jk_layer_norm", ln_outs, x, jnp.ones((1, 8), jnp.bfloat16), empty,
                                     epsilon=EPS, axis=AX),
        "scale_groups": lambda: _call("jk_layer_norm", ln_outs, x, empty, jnp.ones((3, 8), F32),
                                      epsilon=EPS, axis=AX),
        "axis": lambda: _call("jk_layer_norm", ln_outs, x, empty, empty, epsilon=EPS, axis=np.int64(2)),
        "epsilon": lambda: _call("jk_rms_norm", sd((4, 8), F32), x, empty, epsilon=np.float32(-1), axis=AX),
        "mean_shape": lambda: _call("jk_layer_norm", (sd((4, 8), F32), sd((8,), F32), sd((4,), F32)), x,
                                    empty, empty, epsilon=EPS, axis=AX),
        "mean_dtype": lambda: _call("jk_layer_norm", (sd((4, 8), F32), sd((4,), jnp.float16), sd((4,), F32)),
                                    x, empty, empty, epsilon=EPS, axis=AX),
        "x_scalar": lambda: _call("jk_rms_norm", sd((), F32), jnp.float32(1), empty, epsilon=EPS, axis=AX),
        "rms_scale": lambda: _call("jk_rms_norm", sd((4, 8), F32), x, jnp.ones((8,), F32), epsilon=EPS, axis=AX),
        "stats_shape": lambda: _call("jk_layer_norm_stats", (sd((4,), F32), sd((5,), F32)), x, axis=AX),
        "apply_rstd": lambda: _call("jk_rms_norm_apply", sd((4, 8), F32), x, jnp.ones((4, 1), F32), empty,
                                    axis=AX),
    }
    with pytest.raises(Exception, match="jk_"):
        jax.block_until_ready(calls[case]())


# ---- edge cases ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,axis", [((0, 5), -1), ((5, 0), -1), ((2, 0, 3), 1), ((0, 4, 3), 1), ((0,), 0)])
def test_zero_size(shape, axis):
    x = jnp.zeros(shape, jnp.float32)
    n = shape[axis]
    y, mean, rstd = jk.layer_norm(x, jnp.ones((n,)), jnp.ones((n,)), axis=axis, return_stats=True)
    stat_shape = tuple(d for i, d in enumerate(shape) if i != axis % len(shape))
    assert y.shape == shape and mean.shape == stat_shape and rstd.shape == stat_shape
    if n == 0:  # the mean of nothing, as jnp.mean gives
        assert np.isnan(np.asarray(mean)).all() and np.isnan(np.asarray(rstd)).all()
    assert jk.rms_norm(x, axis=axis).shape == shape


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n,axis", [(64, -1), (1000, -1), (4096, -1), (40000, -1), (8, 0)])
def test_nan_poisons_only_its_row(rng, dtype, n, axis):
    shape = (4, n) if axis == -1 else (n, 4)
    x, _ = randn(rng, shape, dtype)
    x = x.at[(2, 5) if axis == -1 else (5, 2)].set(jnp.nan)
    for y in (jk.layer_norm(x, axis=axis), jk.rms_norm(x, axis=axis)):
        y = np.asarray(y.astype(jnp.float32))
        y = y if axis == -1 else y.T
        assert np.isnan(y[2]).all()
        assert np.isfinite(np.delete(y, 2, axis=0)).all()


def test_inputs_not_modified(rng):
    x, xf = randn(rng, (16, 256), jnp.bfloat16)
    s, sf = randn(rng, (256,), jnp.bfloat16)
    jax.block_until_ready(jk.layer_norm(x, s, s, return_stats=True))
    jax.block_until_ready(jk.rms_norm(x, s))
    np.testing.assert_array_equal(np.asarray(x.astype(jnp.float32)), xf)
    np.testing.assert_array_equal(np.asarray(s.astype(jnp.float32)), sf)


def test_misaligned_slice_inside_jit(rng):
    """A slice at an odd offset: whatever buffer XLA hands over, the result is right (scalar path)."""
    x, xf = randn(rng, (6 * 64 + 1,), jnp.float16)
    f = jax.jit(lambda x: jk.layer_norm(x[1:].reshape(6, 64)))
    assert_close(f(x), np_layer_norm(xf[1:].reshape(6, 64))[0], jnp.float16)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", [32, 128, 512, 520, 1032, 2056, 8192, 32760])
def test_many_rows_and_parameter_groups(rng, dtype, n):
    """Rows well beyond the persistent grid times its stages (the bulk tier's ring of row buffers wraps
    several times, both barrier phases; the short-row tier's groups loop over several steps), with one
    scale/bias row per group of rows (vmap over the parameters: CTAs cross groups and reload the
    parameters they hold)."""
    groups, rows = (3, 12000 if n <= 2056 else 3000 if n <= 8192 else 800) if ON_GPU else (3, 40)
    x, xf = randn(rng, (groups, rows, n), dtype, scale=2.0, loc=0.5)
    s, sf = randn(rng, (groups, n), dtype, scale=0.5, loc=1.0)
    b, bf = randn(rng, (groups, n), dtype, scale=0.5)
    y = jax.jit(jax.vmap(lambda x, s, b: jk.layer_norm(x, s, b)))(x, s, b)
    yr = jax.jit(jax.vmap(jk.rms_norm))(x, s)
    idx = np.unique(np.r_[0, 1, rows // 2, rows - 2, rows - 1, rng.integers(0, rows, 40)])
    for g in range(groups):
        xs = xf[g, idx]
        assert_close(y[g][idx], np_layer_norm(xs, sf[g], bf[g])[0], dtype, scale=2.0)
        assert_close(yr[g][idx], np_rms_norm(xs, sf[g]), dtype, scale=2.0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", [24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536])
def test_many_rows_one_parameter_row(rng, dtype, n):
    """Rows with one scale/bias row (the packed short-row tier's case: 64 bytes - 4 KB a row): on the GPU
    enough rows that its grid (16 CTAs per SM at most) loops over several steps for every packs-per-lane
    setting (1024 columns, one warp per row: 80000 rows against 16896 warps)."""
    rows = (600000 if n == 32 else 80000) if ON_GPU else 300
    x = jnp.asarray((rng.standard_normal((rows, n)) * 2.0 + 0.5).astype(np.float32), dtype=dtype)
    (s, sf), (b, bf) = _params(rng, n, dtype, True, True)
    y = jax.jit(lambda x, s, b: jk.layer_norm(x, s, b))(x, s, b)
    yr = jax.jit(jk.rms_norm)(x, s)
    idx = np.unique(np.r_[0, 1, rows // 2, rows - 2, rows - 1, rng.integers(0, rows, 200)])
    xs = np.asarray(x[idx].astype(jnp.float32), np.float64)
    assert_close(y[idx], np_layer_norm(xs, sf, bf)[0], dtype, scale=2.0)
    assert_close(yr[idx], np_rms_norm(xs, sf), dtype, scale=2.0)


# ---- statistics only / apply given statistics -------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape,axis", [((5, 300), -1), ((3, 4097), -1), ((4, 33, 6), 1), ((7, 3), 0)])
def test_stats_and_apply(rng, dtype, shape, axis):
    x, xf = randn(rng, shape, dtype, loc=3.0)
    n = shape[axis]
    mean, m2 = norms.layer_norm_stats(x, axis=axis)
    em = xf.mean(axis=axis)
    assert_close(mean, em, jnp.float32, scale=4.0)
    assert_close(m2, ((xf - np.expand_dims(em, axis)) ** 2).sum(axis=axis), rtol=1e-4, atol=1e-4 * n)
    assert_close(norms.rms_norm_stats(x, axis=axis), (xf ** 2).mean(axis=axis), rtol=1e-5, atol=1e-5)
    (s, sf), (b, bf) = _params(rng, n, dtype, True, True)
    ey, em, er = np_layer_norm(xf, sf, bf, axis=axis)
    y = norms.layer_norm_apply(x, jnp.asarray(em, F32), jnp.asarray(er, F32), s, b, axis=axis)
    assert_close(y, ey, dtype)
    rr = 1.0 / np.sqrt((xf ** 2).mean(axis=axis) + 1e-6)
    assert_close(norms.rms_norm_apply(x, jnp.asarray(rr, F32), s, axis=axis), np_rms_norm(xf, sf, axis=axis), dtype)


def test_stats_apply_vmap(rng):
    B = 3
    x, xf = randn(rng, (4, B, 32), jnp.float32)
    s, sf = randn(rng, (B, 32), jnp.float32)
    mean, m2 = jax.vmap(norms.layer_norm_stats, in_axes=1)(x)
    assert_close(mean, xf.mean(-1).T, jnp.float32, scale=4.0)
    rstd = 1.0 / jnp.sqrt(m2 / 32 + 1e-5)
    y = jax.vmap(lambda x, m, r, s: norms.layer_norm_apply(x, m, r, s), in_axes=(1, 0, 0, 0))(x, mean, rstd, s)
    for i in range(B):
        assert_close(y[i], np_layer_norm(xf[:, i], sf[i])[0], jnp.float32, scale=2.0)
    ms = jax.vmap(norms.rms_norm_stats, in_axes=1)(x)
    assert_close(ms, (xf ** 2).mean(-1).T, rtol=1e-5, atol=1e-5)


# ---- properties ---------------------------------------------------------------------------------
@given(data=st.data())
def test_property_random_shapes(data):
    rank = data.draw(st.integers(1, 4))
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank)))
    axis = data.draw(st.integers(-rank, rank - 1))
    dtype = data.draw(st.sampled_from(FLOAT_DTYPES))
    loc = data.draw(st.sampled_from([0.0, 100.0, -3.0]))
    scale = data.draw(st.sampled_from([1.0, 1e-2, 50.0]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    x, xf = randn(rng, shape, dtype, scale=scale, loc=loc)
    n = shape[axis]
    s, sf = randn(rng, (n,), dtype, loc=1.0)
    y = jk.layer_norm(x, s, s, axis=axis)
    ey = np_layer_norm(xf, sf, sf, axis=axis)[0]
    # Rounding x to the storage dtype already happened in xf; allow for float32 statistics on a row
    # with a large mean relative to its spread.
    assert_close(y, ey, dtype, scale=4.0 if dtype == jnp.float32 else 1.0, atol=1e-3 if dtype == F32 else None)
    assert_close(jk.rms_norm(x, s, axis=axis), np_rms_norm(xf, sf, axis=axis), dtype, scale=2.0)


# ---- GPU-only sizes ----------------------------------------------------------------------------------
@pytest.mark.large
@pytest.mark.parametrize("fn", ["layer_norm", "rms_norm"])
def test_more_than_2_31_elements(fn):
    rows, n = 49152, 65536  # 3.2e9 elements of bfloat16
    x = jax.random.normal(jax.random.key(0), (rows, n), jnp.bfloat16)
    y = jax.jit(getattr(jk, fn))(x)
    idx = np.array([0, 1, 32767, 32768, rows - 2, rows - 1])
    xs = np.asarray(x[idx].astype(jnp.float32), np.float64)
    ys = y[idx]
    ref = np_layer_norm(xs)[0] if fn == "layer_norm" else np_rms_norm(xs)
    assert_close(ys, ref, jnp.bfloat16)
