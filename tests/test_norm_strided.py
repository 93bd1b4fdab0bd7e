"""LayerNorm / RMSNorm over a non-last axis: the register column-tile tier (cuda/norm/norm_strided.cuh) and its
boundaries against float64 NumPy, in every compiled configuration (JK_STRIDED_TILE, re-read at every launch
here) and the default dispatch. On CPU the same cases run through the CPU handlers (the knob is ignored)."""
from __future__ import annotations

import os

# Read at every launch (before any test of this process launches a kernel: pytest imports every module
# first), so each test picks its configuration with monkeypatch.
os.environ.setdefault("JK_STRIDED_TILE_DYNAMIC", "1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jax_kernels as jk  # noqa: E402
from conftest import FLOAT_DTYPES, ON_GPU, assert_close, randn  # noqa: E402
from test_norms import np_layer_norm, np_rms_norm  # noqa: E402

# default, the previous scalar kernel, the four compiled tiles, forced clusters
# (on CPU the knob means nothing: the default only, to keep the file fast)
CONFIGS = [None, "legacy", "2 4 1024", "2 8 1024", "2 16 512", "4 8 512", "4 16 512", "2 8 1024 2",
           "4 16 512 4"]
if not ON_GPU:
    CONFIGS = [None]


def use(monkeypatch, config):
    if config is None:
        monkeypatch.delenv("JK_STRIDED_TILE", raising=False)
    else:
        monkeypatch.setenv("JK_STRIDED_TILE", config)


# (outer, n, inner): inner a multiple of every pack (8) or not (3, 12 for 16-bit), n around the rows one CTA
# holds (R x max threads / TX: 1024 for "4 8 512", 2048 for "2 4 1024" / "4 16 512", 4096 for "2 8 1024" /
# "2 16 512"; beyond: a cluster, or the scalar kernel), size-1 dims, partial tiles (column packs not a
# multiple of TX).
SHAPES = [(2, 7, 16), (1, 1, 8), (3, 1, 24), (1, 33, 8), (5, 64, 40), (1, 1024, 16), (1, 1025, 8),
          (2, 2047, 8), (1, 2048, 16), (1, 2049, 16), (1, 4097, 8), (2, 300, 12), (2, 50, 3)]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_layer_norm_axis1(monkeypatch, rng, config, dtype, shape):
    use(monkeypatch, config)
    x, x64 = randn(rng, shape, dtype)
    s, s64 = randn(rng, (shape[1],), dtype, scale=0.2, loc=1.0)
    b, b64 = randn(rng, (shape[1],), dtype, scale=0.2)
    y, mean, rstd = jax.jit(lambda x, s, b: jk.layer_norm(x, s, b, axis=1, return_stats=True))(x, s, b)
    ry, rmean, rrstd = np_layer_norm(x64, s64, b64, axis=1, eps=1e-5)
    assert y.shape == shape and y.dtype == dtype
    assert_close(y, ry, dtype, scale=2.0)
    np.testing.assert_allclose(np.asarray(mean), rmean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(rstd), rrstd, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_rms_norm_axis1(monkeypatch, rng, config, dtype, shape):
    use(monkeypatch, config)
    x, x64 = randn(rng, shape, dtype)
    s, s64 = randn(rng, (shape[1],), dtype, scale=0.2, loc=1.0)
    y = jax.jit(lambda x, s: jk.rms_norm(x, s, axis=1))(x, s)
    assert_close(y, np_rms_norm(x64, s64, axis=1, eps=1e-6), dtype, scale=2.0)
    y = jax.jit(lambda x: jk.rms_norm(x, axis=1))(x)  # no scale
    assert_close(y, np_rms_norm(x64, axis=1, eps=1e-6), dtype, scale=2.0)


@pytest.mark.parametrize("config", [None, "2 8 1024", "4 16 512 2"] if ON_GPU else [None])
def test_layer_norm_shifted_columns(monkeypatch, rng, config):
    # Columns of mean 1e4 and std 0.1: the case the shift by each column's first element exists for.
    use(monkeypatch, config)
    x, x64 = randn(rng, (3, 1500, 32), jnp.float32, scale=0.1, loc=1e4)
    y = jax.jit(lambda x: jk.layer_norm(x, axis=1))(x)
    assert_close(y, np_layer_norm(x64, axis=1, eps=1e-5)[0], jnp.float32, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("config", [None, "2 8 1024", "4 8 512"] if ON_GPU else [None])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_vmap_grouped_parameters(monkeypatch, rng, config, dtype):
    # vmap over x and scale/bias: one call with (G, n) parameters; the normalised axis is not the last.
    use(monkeypatch, config)
    x, x64 = randn(rng, (3, 4, 96, 16), dtype)
    s, s64 = randn(rng, (3, 96), dtype, scale=0.2, loc=1.0)
    b, b64 = randn(rng, (3, 96), dtype, scale=0.2)
    f = jax.jit(jax.vmap(lambda x, s, b: jk.layer_norm(x, s, b, axis=1)))
    y = f(x, s, b)
    for k in range(3):
        assert_close(y[k], np_layer_norm(x64[k], s64[k], b64[k], axis=1, eps=1e-5)[0], dtype, scale=2.0)
    g = jax.jit(jax.vmap(lambda x, s: jk.rms_norm(x, s, axis=1), in_axes=(1, 0), out_axes=1))
    xt = jnp.moveaxis(x, 0, 1)
    y = g(xt, s)
    for k in range(3):
        assert_close(y[:, k], np_rms_norm(x64[k], s64[k], axis=1, eps=1e-6), dtype, scale=2.0)


@pytest.mark.parametrize("config", [None, "2 8 1024", "4 16 512"] if ON_GPU else [None])
def test_nan_column_poisons_only_its_column(monkeypatch, rng, config):
    use(monkeypatch, config)
    x, _ = randn(rng, (2, 100, 16), jnp.float32)
    x = x.at[1, 37, 5].set(jnp.nan)
    y = np.asarray(jax.jit(lambda x: jk.layer_norm(x, axis=1))(x))
    assert np.isnan(y[1, :, 5]).all()
    mask = np.ones(y.shape, bool)
    mask[1, :, 5] = False
    assert np.isfinite(y[mask]).all()


@pytest.mark.parametrize("config", [None, "2 8 1024"] if ON_GPU else [None])
def test_axis0_and_middle_axes(monkeypatch, rng, config):
    use(monkeypatch, config)
    for shape, axis in [((64, 8, 8), 0), ((2, 3, 40, 8), 2), ((6, 128, 4, 4), 1)]:
        x, x64 = randn(rng, shape, jnp.bfloat16)
        y = jax.jit(lambda x: jk.layer_norm(x, axis=axis))(x)
        assert_close(y, np_layer_norm(x64, axis=axis, eps=1e-5)[0], jnp.bfloat16, scale=2.0)
        y = jax.jit(lambda x: jk.rms_norm(x, axis=axis))(x)
        assert_close(y, np_rms_norm(x64, axis=axis, eps=1e-6), jnp.bfloat16, scale=2.0)


@pytest.mark.parametrize("config", [None, "2 8 1024 8"] if ON_GPU else [None])
def test_long_columns_cluster(monkeypatch, rng, config):
    # 32768 rows: 8 CTAs of a cluster hold 4096 each (sm_90+); the scalar kernel otherwise.
    use(monkeypatch, config)
    x, x64 = randn(rng, (2, 32768, 16), jnp.bfloat16)
    y = jax.jit(lambda x: jk.layer_norm(x, axis=1))(x)
    assert_close(y, np_layer_norm(x64, axis=1, eps=1e-5)[0], jnp.bfloat16, scale=2.0)
    y = jax.jit(lambda x: jk.rms_norm(x, axis=1))(x)
    assert_close(y, np_rms_norm(x64, axis=1, eps=1e-6), jnp.bfloat16, scale=2.0)


# The split-axis tier (cuda/norm/norm_split.cuh, CUDA only: n > 4096 with a workspace from the lowering): chunks of
# 256 (TX = 16 packs across), 512 (8) or 1024 (4) rows; columns of 1-32 packs, tiles crossing an outer boundary
# (24 or 40 columns), a last chunk of 1 row (4097, 8193), more chunks than a warp's lanes (70001 rows: 274 of 256),
# inner not a whole number of 16-bit packs (12: the scalar kernel for 16-bit, the split tier for float32).
# JK_STRIDED_SPLIT=0: the register tile / scalar kernel, for comparison.
SPLIT_SHAPES = [(1, 4097, 8), (2, 5000, 24), (3, 8193, 128), (1, 70001, 64), (2, 4500, 12), (2, 9000, 40),
                (1, 4608, 256)]


@pytest.mark.parametrize("split", ["1", "0"] if ON_GPU else ["1"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", SPLIT_SHAPES)
def test_split_axis(monkeypatch, rng, split, dtype, shape):
    use(monkeypatch, None)
    monkeypatch.setenv("JK_STRIDED_SPLIT", split)
    x, x64 = randn(rng, shape, dtype)
    s, s64 = randn(rng, (shape[1],), dtype, scale=0.2, loc=1.0)
    b, b64 = randn(rng, (shape[1],), dtype, scale=0.2)
    y, mean, rstd = jax.jit(lambda x, s, b: jk.layer_norm(x, s, b, axis=1, return_stats=True))(x, s, b)
    ry, rmean, rrstd = np_layer_norm(x64, s64, b64, axis=1, eps=1e-5)
    assert_close(y, ry, dtype, scale=2.0)
    np.testing.assert_allclose(np.asarray(mean), rmean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(rstd), rrstd, rtol=1e-4, atol=1e-5)
    y = jax.jit(lambda x: jk.layer_norm(x, axis=1))(x)  # no parameters, no statistics
    assert_close(y, np_layer_norm(x64, axis=1, eps=1e-5)[0], dtype, scale=2.0)
    y = jax.jit(lambda x, s: jk.rms_norm(x, s, axis=1))(x, s)
    assert_close(y, np_rms_norm(x64, s64, axis=1, eps=1e-6), dtype, scale=2.0)


def test_split_axis_shifted_columns_and_vmap(rng):
    # Columns of mean 1e4 and std 0.1 over 20000 rows: each chunk's statistics and their merge stay exact enough.
    x, x64 = randn(rng, (2, 20000, 32), jnp.float32, scale=0.1, loc=1e4)
    y = jax.jit(lambda x: jk.layer_norm(x, axis=1))(x)
    assert_close(y, np_layer_norm(x64, axis=1, eps=1e-5)[0], jnp.float32, rtol=1e-2, atol=1e-2)
    # vmap over x and per-example parameters: one call with (G, n) parameter rows on a long axis.
    x, x64 = randn(rng, (3, 2, 6000, 16), jnp.bfloat16)
    s, s64 = randn(rng, (3, 6000), jnp.bfloat16, scale=0.2, loc=1.0)
    b, b64 = randn(rng, (3, 6000), jnp.bfloat16, scale=0.2)
    y = jax.jit(jax.vmap(lambda x, s, b: jk.layer_norm(x, s, b, axis=1)))(x, s, b)
    for k in range(3):
        assert_close(y[k], np_layer_norm(x64[k], s64[k], b64[k], axis=1, eps=1e-5)[0], jnp.bfloat16, scale=2.0)


def test_split_axis_lowering_adds_workspace():
    # The CUDA lowering adds the workspace as a last result exactly where the split tier may run; CPU never does.
    for f, results in ((lambda x: jk.layer_norm(x, axis=1), 3), (lambda x: jk.rms_norm(x, axis=1), 1)):
        for shape, want in (((2, 8192, 64), ON_GPU), ((2, 4096, 64), False), ((2, 8192), False)):
            text = jax.jit(f).lower(jax.ShapeDtypeStruct(shape, jnp.bfloat16)).as_text()
            call = next(line for line in text.splitlines() if "stablehlo.custom_call" in line and "@jk_" in line)
            has_ws = "xf32>" in call.split("->")[-1] and (results + 1) == call.split("->")[-1].count("tensor<")
            assert has_ws == want, (shape, call)
