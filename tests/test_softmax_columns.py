"""Softmax / log-softmax over a non-last axis: the register column-tile tier
(cuda/softmax/softmax_columns.cuh) and its boundaries against float64 NumPy, in every compiled configuration
(JK_STRIDED_TILE, re-read at every launch here) and the default dispatch; masks (where=) along the axis keep
the ColumnsKernel path. On CPU the default only (the knob means nothing there)."""
from __future__ import annotations

import os

# Read at every launch (pytest imports every module before any test launches a kernel).
os.environ.setdefault("JK_STRIDED_TILE_DYNAMIC", "1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jax_kernels as jk  # noqa: E402
from conftest import FLOAT_DTYPES, ON_GPU, assert_close, randn  # noqa: E402
from test_norm_strided import CONFIGS, SHAPES, SPLIT_SHAPES, use  # noqa: E402  (the same tile configurations and shapes)
from test_softmax import ref  # noqa: E402

FNS = {"softmax": (jk.softmax, False), "log_softmax": (jk.log_softmax, True)}


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("op", FNS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_axis1(monkeypatch, rng, config, op, dtype, shape):
    use(monkeypatch, config)
    fn, log = FNS[op]
    x, x64 = randn(rng, shape, dtype, 3.0)
    y = jax.jit(lambda x: fn(x, axis=1))(x)
    assert y.shape == shape and y.dtype == dtype
    assert_close(y, ref(x64, 1, log=log), dtype, scale=2.0)


@pytest.mark.parametrize("config", [None, "2 8 1024", "4 16 512 2"] if ON_GPU else [None])
@pytest.mark.parametrize("op", FNS)
def test_special_values(monkeypatch, rng, config, op):
    # A column of -inf (no live entry: NaN, as jax.nn), a column with a NaN, a +inf, huge magnitudes.
    use(monkeypatch, config)
    fn, log = FNS[op]
    x, _ = randn(rng, (2, 600, 16), jnp.float32)
    x = x.at[0, :, 3].set(-jnp.inf).at[1, 17, 4].set(jnp.nan).at[0, 5, 6].set(jnp.inf)
    x = x.at[1, :, 7].multiply(1e4).at[1, 9, 8].set(-3e38).at[0, :300, 9].set(-jnp.inf)
    y = np.asarray(jax.jit(lambda x: fn(x, axis=1))(x))
    r = ref(np.asarray(x, np.float64), 1, log=log)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(r))
    ok = ~np.isnan(r)
    np.testing.assert_allclose(y[ok], r[ok], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("config", [None, "2 8 1024"] if ON_GPU else [None])
@pytest.mark.parametrize("op", FNS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_masked_axis1_falls_back(monkeypatch, rng, config, op, dtype):
    use(monkeypatch, config)
    fn, log = FNS[op]
    x, x64 = randn(rng, (3, 200, 16), dtype)
    mask = rng.random((200, 16)) < 0.7
    mask[:, 2] = False  # a fully masked column
    y = jax.jit(lambda x, m: fn(x, axis=1, where=m))(x, jnp.asarray(mask))
    r = ref(x64, 1, mask, log)
    ok = ~np.isnan(r)
    assert np.isnan(np.asarray(y, np.float64)[~ok]).all()
    assert_close(np.asarray(y, np.float64)[ok], r[ok], dtype, scale=2.0)


@pytest.mark.parametrize("config", [None, "2 8 1024", "4 8 512"] if ON_GPU else [None])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_vmap_and_axis0(monkeypatch, rng, config, dtype):
    use(monkeypatch, config)
    x, x64 = randn(rng, (3, 4, 96, 16), dtype)
    y = jax.jit(jax.vmap(lambda x: jk.softmax(x, axis=1)))(x)
    assert_close(y, ref(x64, 2), dtype, scale=2.0)
    y = jax.jit(jax.vmap(lambda x: jk.log_softmax(x, axis=1), in_axes=3, out_axes=3))(x)
    assert_close(y, ref(x64, 1, log=True), dtype, scale=2.0)
    x, x64 = randn(rng, (128, 8, 8), dtype)
    assert_close(jax.jit(lambda x: jk.softmax(x, axis=0))(x), ref(x64, 0), dtype, scale=2.0)


@pytest.mark.parametrize("config", [None, "2 8 1024 8"] if ON_GPU else [None])
def test_long_columns_cluster(monkeypatch, rng, config):
    use(monkeypatch, config)
    x, x64 = randn(rng, (2, 32768, 16), jnp.bfloat16, 3.0)
    y = jax.jit(lambda x: jk.softmax(x, axis=1))(x)
    assert_close(y, ref(x64, 1), jnp.bfloat16, scale=2.0)
    y = jax.jit(lambda x: jk.log_softmax(x, axis=1))(x)
    assert_close(y, ref(x64, 1, log=True), jnp.bfloat16, scale=2.0)


# The split-axis tier (cuda/softmax/softmax_split.cuh, CUDA only: unmasked, n > 4096, a workspace from the lowering);
# shapes as the norms' split tests. JK_STRIDED_SPLIT=0: the register tile / ColumnsKernel, for comparison.
@pytest.mark.parametrize("split", ["1", "0"] if ON_GPU else ["1"])
@pytest.mark.parametrize("op", FNS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", SPLIT_SHAPES)
def test_split_axis(monkeypatch, rng, split, op, dtype, shape):
    use(monkeypatch, None)
    monkeypatch.setenv("JK_STRIDED_SPLIT", split)
    fn, log = FNS[op]
    x, x64 = randn(rng, shape, dtype, 3.0)
    y = jax.jit(lambda x: fn(x, axis=1))(x)
    assert_close(y, ref(x64, 1, log=log), dtype, scale=2.0)


@pytest.mark.parametrize("op", FNS)
def test_split_axis_special_values(rng, op):
    # Over 9000 rows (36 chunks of 256): a column of -inf (NaN, as jax.nn), one whose first 5000 rows are -inf (whole
    # chunks with nothing in them), a NaN, a +inf, huge magnitudes, a -inf in every row of one chunk but the last.
    fn, log = FNS[op]
    x, _ = randn(rng, (2, 9000, 16), jnp.float32)
    x = x.at[0, :, 3].set(-jnp.inf).at[1, 1700, 4].set(jnp.nan).at[0, 8999, 6].set(jnp.inf)
    x = x.at[1, :, 7].multiply(1e4).at[1, 9, 8].set(-3e38).at[0, :5000, 9].set(-jnp.inf)
    x = x.at[1, 256:511, 10].set(-jnp.inf)
    y = np.asarray(jax.jit(lambda x: fn(x, axis=1))(x))
    r = ref(np.asarray(x, np.float64), 1, log=log)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(r))
    ok = ~np.isnan(r)
    np.testing.assert_allclose(y[ok], r[ok], rtol=1e-5, atol=1e-5)
    # The masked call on the same long axis keeps ColumnsKernel (no workspace: see test_norm_strided's lowering test).
    mask = jnp.asarray(rng.random((2, 9000, 16)) > 0.3)
    xs = jnp.where(jnp.isfinite(x), x, 0.0)
    y = np.asarray(jax.jit(lambda x, m: fn(x, axis=1, where=m))(xs, mask))
    r = ref(np.asarray(xs, np.float64), 1, mask=np.asarray(mask), log=log)
    np.testing.assert_allclose(y, r, rtol=1e-5, atol=1e-5)


def test_split_axis_lowering_adds_workspace():
    # Unmasked long non-last axes get the workspace result on CUDA; masked calls, short axes and CPU never do.
    def results(f, *shapes):
        text = jax.jit(f).lower(*shapes).as_text()
        call = next(line for line in text.splitlines() if "stablehlo.custom_call" in line and "@jk_" in line)
        return call.split("->")[-1].count("tensor<")
    x = jax.ShapeDtypeStruct((2, 8192, 64), jnp.float32)
    m = jax.ShapeDtypeStruct((2, 8192, 64), jnp.bool_)
    for fn, _ in FNS.values():
        assert results(lambda x: fn(x, axis=1), x) == (2 if ON_GPU else 1)
        assert results(lambda x, m: fn(x, axis=1, where=m), x, m) == 1
        assert results(lambda x: fn(x, axis=1), jax.ShapeDtypeStruct((2, 4096, 64), jnp.float32)) == 1
