"""softmax / log_softmax (and the stats / apply entries) against float64 NumPy with jax.nn's semantics.

Row lengths cross every CUDA tier boundary (softmax_launch.cu): sub-warp lane groups (packs of 1..32),
warp per row (n <= 1024; 2 packs per lane from 4 packs on), a CTA per row (unmasked: n <= 16384 float32 at
16 / 32 elements per thread below / above 4096, n <= 32768 16-bit at 32 / 64 packed elements; masked:
n <= 8192 / 16384), two passes beyond; odd n (rows that start at odd element offsets: unaligned) takes the
scalar path. The tier knobs (JK_SOFTMAX_MAX_CLUSTER, JK_SOFTMAX_HALF_BLOCK, JK_SOFTMAX_SHORT_ROWS,
JK_SOFTMAX_LANE_PACKS, JK_SOFTMAX_HALF_WIDE, JK_SOFTMAX_F32_ELEMS, read once per process) are checked in
subprocesses on the GPU.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, strategies as st

import jax_kernels as jk
from jax_kernels.softmax import softmax_apply, softmax_stats
from conftest import FLOAT_DTYPES, ON_GPU, assert_close, custom_call_targets, randn

OPS = {"softmax": (jk.softmax, jax.nn.softmax, False), "log_softmax": (jk.log_softmax, jax.nn.log_softmax, True)}


def ref(x64, axis=-1, mask=None, log=False):
    """float64 NumPy with jax.nn's masked semantics (masked -> 0 / -inf, no live entry -> all masked)."""
    live = np.ones(x64.shape, bool) if mask is None else np.broadcast_to(np.asarray(mask), x64.shape)
    xs = np.where(live, x64, -np.inf)
    with np.errstate(all="ignore"):
        m = np.max(xs, axis=axis, keepdims=True, initial=-np.inf)
        t = xs - m
        e = np.exp(t)
        s = np.sum(np.where(live, e, 0.0), axis=axis, keepdims=True)
        out = t - np.log(s) if log else e / s
    return np.where(live, out, -np.inf if log else 0.0)


def check(op, x, x64, axis=-1, mask=None, scale=1.0):
    fn, _, log = OPS[op]
    y = fn(x, axis=axis, where=None if mask is None else jnp.asarray(mask))
    assert y.shape == x.shape and y.dtype == x.dtype
    assert_close(y, ref(x64, axis, mask, log), dtype=x.dtype, scale=scale)
    return y


# ---- every tier, every dtype ------------------------------------------------------------------------
ROW_LENGTHS = [1, 3, 7, 8, 16, 24, 31, 32, 33, 64, 255, 256, 257, 512, 1024, 1025, 1032, 2047, 2048, 2056, 4095,
               4096, 4104, 8192, 8200, 12288, 16376, 16383, 16384, 16392, 32760, 32768, 32776, 65536, 131073]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", ROW_LENGTHS)
def test_last_axis_tiers(rng, op, dtype, n):
    rows = 37 if n <= 1024 else 3
    x, x64 = randn(rng, (rows, n), dtype, scale=3.0)
    check(op, x, x64, scale=1.0 if n <= 4096 else 10.0)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape,axis", [((5, 33, 7), 1), ((3, 300, 64), 1), ((1030, 3), 0), ((2, 3, 4, 5), 0),
                                        ((4, 1, 6), 1), ((6, 40, 2, 3), -3), ((2, 2049, 33), 1)])
def test_other_axes(rng, op, dtype, shape, axis):
    x, x64 = randn(rng, shape, dtype, scale=2.0)
    check(op, x, x64, axis=axis)


# ---- where= -------------------------------------------------------------------------------------------
MASK_CASES = [  # (x shape, mask shape, axis)
    ((6, 40), (6, 40), -1), ((6, 40), (40,), -1), ((6, 40), (6, 1), -1), ((2, 16, 16), (16, 16), -1),
    ((3, 64, 64), (1, 64, 64), -1), ((4, 5, 2048), (4, 1, 2048), -1), ((4, 3, 5000), (3, 5000), -1),
    ((7, 9, 5), (9, 1), 1), ((7, 9, 5), (7, 1, 5), 0), ((3, 1030), (3, 1030), 0), ((2, 3, 4, 5), (3, 1, 5), 2),
    ((5, 37), (5, 37), -1), ((5, 1027), (1027,), -1), ((3, 20000), (3, 20000), -1),
]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("xs,ms,axis", MASK_CASES)
def test_mask(rng, op, dtype, xs, ms, axis):
    x, x64 = randn(rng, xs, dtype)
    mask = rng.random(ms) < 0.7
    check(op, x, x64, axis=axis, mask=mask, scale=3.0 if xs[axis] > 4096 else 1.0)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n", [16, 2048 if ON_GPU else 300])
def test_causal_mask_matches_jax_nn(rng, op, n):
    x, _ = randn(rng, (2, n, n), jnp.bfloat16)
    mask = jnp.tril(jnp.ones((n, n), bool))
    fn, nn, _ = OPS[op]
    np.testing.assert_allclose(np.asarray(fn(x, where=mask), np.float32),
                               np.asarray(nn(x.astype(jnp.float32), where=mask)), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", [5, 64, 3000, 12000, 20000])
def test_masked_edge_rows(op, dtype, n):
    """Fully masked rows, rows with one live entry (finite, -inf, +inf, NaN), masked NaN/inf, -inf rows."""
    fn, nn, log = OPS[op]
    x = np.random.default_rng(n).standard_normal((10, n)).astype(np.float32)
    mask = np.ones((10, n), bool)
    mask[0] = False                                    # no live entry
    mask[1] = False; mask[1, n // 2] = True             # one live entry
    mask[2] = False; mask[2, 0] = True; x[2, 0] = -np.inf
    mask[3] = False; mask[3, -1] = True; x[3, -1] = np.inf
    mask[4] = False; mask[4, 1 % n] = True; x[4, 1 % n] = np.nan
    x[5, 0] = np.nan; mask[5, 0] = False                # masked NaN does not poison
    x[6, :] = -np.inf                                  # live entries all -inf: NaN (as jax.nn)
    x[7, 2] = np.inf                                   # live +inf: all NaN
    x[8, 3] = np.nan                                   # live NaN: all NaN (row 8 only)
    x[9, 1] = np.inf; mask[9, 1] = False                # masked +inf ignored
    xj = jnp.asarray(x, dtype)
    x64 = np.asarray(xj.astype(jnp.float32), np.float64)
    y = np.asarray(fn(xj, where=jnp.asarray(mask)).astype(jnp.float32), np.float64)
    expected = ref(x64, -1, mask, log)
    assert_close(y, expected, dtype=dtype)
    # Same NaN pattern and masked values as jax.nn itself (float32 to keep its own rounding out).
    want = np.asarray(nn(jnp.asarray(x64, jnp.float32), where=jnp.asarray(mask)), np.float64)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(want))
    np.testing.assert_array_equal(y[~mask], want[~mask])
    assert np.all(y[0] == (-np.inf if log else 0.0))
    assert y[1, n // 2] == (0.0 if log else 1.0)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", [1, 4, 128, 700, 5000, 20000])
def test_extremes_without_mask(op, dtype, n):
    fn, nn, log = OPS[op]
    big_neg = -6e4 if dtype == jnp.float16 else -3e38
    x = np.random.default_rng(1).standard_normal((6, n)).astype(np.float32)
    x[0] = -np.inf                       # all -inf: NaN (as jax.nn)
    x[1, 0] = 1e4                        # huge positive among normal values
    x[2] = big_neg; x[2, -1] = 0.0       # huge negatives
    x[3] *= 1e4 if dtype != jnp.float16 else 1e3
    x[4, :] = big_neg                    # a row of equal huge negatives: uniform
    x[5, n // 2] = np.nan                # NaN poisons its row only
    xj = jnp.asarray(x, dtype)
    x64 = np.asarray(xj.astype(jnp.float32), np.float64)
    y = fn(xj)
    assert_close(y, ref(x64, -1, None, log), dtype=dtype)
    yn = np.asarray(y.astype(jnp.float32))
    assert np.isnan(yn[5]).all() and not np.isnan(yn[1:5]).any()
    if n == 1:
        assert np.all(yn[1:5] == (0.0 if log else 1.0))


# Rows of n % P != 0 on the window tier (session 32, softmax_window.cuh; by default past 1024 columns,
# JK_SOFTMAX_WINDOW=1 forces it onto shorter rows too, 0 keeps the scalar tiers): the window held in registers where it
# fits (3 and 97: a warp of 2 packs a lane; 1025: a CTA of 5 packs a thread, 16-bit one pack past the warp's 128; 4099:
# a CTA of 6; 16381: a CTA of 8, 16-bit a CTA of 6, one pack past the CTA of 4's 2048; 50257: a CTA of 8, 800 threads,
# 16-bit; two passes, float32); 37 rows start at every offset within a pack; the extreme rows of
# test_extremes_without_mask on the same lengths.
def check_window_rows(rng, op, dtype, n, rows):
    fn, _, log = OPS[op]
    x, x64 = randn(rng, (rows, n), dtype, scale=3.0)
    check(op, x, x64, scale=1.0 if n <= 4096 else 10.0)
    big_neg = -6e4 if dtype == jnp.float16 else -3e38
    e = np.random.default_rng(1).standard_normal((7, n)).astype(np.float32)
    e[0] = -np.inf                       # all -inf: NaN (as jax.nn)
    e[1, 0] = 1e4                        # huge positive among normal values
    e[2] = big_neg; e[2, -1] = 0.0       # huge negatives
    e[3, : n // 2] = -np.inf             # -inf before the finite entries
    e[4, :] = big_neg                    # a row of equal huge negatives: uniform
    e[5, n // 2] = np.nan                # NaN poisons its row only
    e[6, -1] = np.inf                    # +inf: NaN (as jax.nn)
    ej = jnp.asarray(e, dtype)
    y = fn(ej)
    with np.errstate(invalid="ignore"):
        want = ref(np.asarray(ej.astype(jnp.float32), np.float64), -1, None, log)
    assert_close(y[1:5], want[1:5], dtype=dtype)
    yn = np.asarray(y.astype(jnp.float32))
    assert np.isnan(yn[0]).all() and np.isnan(yn[5]).all() and np.isnan(yn[6]).all()
    assert not np.isnan(yn[1:5]).any()


@pytest.mark.parametrize("window", ["1", "0"] if ON_GPU else ["1"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", [3, 97, 1025, 4099, 16381, 50257])
def test_window_rows(rng, monkeypatch, window, op, dtype, n):
    monkeypatch.setenv("JK_SOFTMAX_WINDOW", window)
    check_window_rows(rng, op, dtype, n, 37 if n <= 4099 else 5)


# Each shape of the window tier at its bound and one past it, by the widest window's packs (float32 (n + 6) // 4,
# 16-bit (n + 14) // 8): a warp of 2 packs a lane up to 64 packs, of 4 up to 128, a CTA of 4, 5, 6 or 8 packs a thread
# (the least warps x (C + 2), C < 8 up to 512 threads: 5 at 257-258 packs, float32 1025 / 16-bit 2051), of 8 up to 8192
# (1024 threads), the two-pass kernel past it; 16-bit rows of 1025-6144 packs 6 or 8 by the rows resident per SM
# (session 35): 6 at 1024 threads for 6144 packs (49145), 8 past it (49146); and on the GPU the two-pass kernel at the
# same lengths (JK_SOFTMAX_WINDOW_REGS=0: a warp up to 64 packs, a CTA past it). 9 rows: every start offset within a
# pack where n is odd.
WINDOW_BOUNDS = {4: [253, 254, 509, 510, 1025, 8189, 8190, 32765, 32766],
                 2: [505, 506, 1017, 1018, 2051, 16377, 16378, 49145, 49146, 65529, 65530]}


@pytest.mark.parametrize("regs", ["1", "0"] if ON_GPU else ["1"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype,n", [(dt, n) for dt in FLOAT_DTYPES for n in WINDOW_BOUNDS[np.dtype(dt).itemsize]])
def test_window_rows_bounds(rng, monkeypatch, regs, op, dtype, n):
    monkeypatch.setenv("JK_SOFTMAX_WINDOW", "1")
    monkeypatch.setenv("JK_SOFTMAX_WINDOW_REGS", regs)
    check_window_rows(rng, op, dtype, n, 9)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_nan_poisons_only_its_row_other_axis(dtype):
    x = np.random.default_rng(2).standard_normal((50, 4, 3)).astype(np.float32)
    x[7, 2, 1] = np.nan
    y = np.asarray(jk.softmax(jnp.asarray(x, dtype), axis=0).astype(jnp.float32))
    assert np.isnan(y[:, 2, 1]).all()
    bad = np.zeros((4, 3), bool); bad[2, 1] = True
    assert not np.isnan(y[:, ~bad]).any()


# ---- transformations ----------------------------------------------------------------------------------
@pytest.mark.parametrize("op", OPS)
def test_jit_jaxpr_and_hlo(rng, op):
    fn = OPS[op][0]
    x, x64 = randn(rng, (8, 300), jnp.float32)
    mask = jnp.asarray(rng.random((300,)) < 0.5)
    assert_close(jax.jit(lambda a, m: fn(a, where=m))(x, mask), ref(x64, -1, np.asarray(mask), OPS[op][2]))
    assert f"jk_{op}" in str(jax.make_jaxpr(lambda a: fn(a))(x))
    targets, text = custom_call_targets(lambda a, m: fn(a, axis=0, where=m), x, jnp.ones((8, 1), bool))
    assert targets == [f"jk_{op}"]
    for bad in ("stablehlo.reduce", "stablehlo.exponential", "stablehlo.transpose", "stablehlo.broadcast_in_dim"):
        assert bad not in text, bad  # the mask travels with its size-1 dims, never expanded


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("x_axis,m_axis", [(0, None), (1, None), (2, None), (0, 0), (1, 2), (2, 1), (None, 0),
                                           (0, "none")])
@pytest.mark.parametrize("axis", [-1, 0])
def test_vmap(rng, op, x_axis, m_axis, axis):
    fn, _, log = OPS[op]
    B = 3
    base = (4, 5)
    xs = list(base); xs.insert(x_axis if x_axis is not None else 0, B)
    x, x64 = randn(rng, tuple(xs) if x_axis is not None else base, jnp.float32)
    if m_axis == "none":
        f = jax.vmap(lambda a: fn(a, axis=axis), in_axes=(x_axis,))
        args = (x,)
        masks = [None] * B
    else:
        ms = [4, 1] if m_axis is None else [4, 1]
        if m_axis is not None:
            ms.insert(m_axis, B)
        mask_np = rng.random(ms) < 0.6
        f = jax.vmap(lambda a, m: fn(a, axis=axis, where=m), in_axes=(x_axis, m_axis))
        args = (x, jnp.asarray(mask_np))
        masks = [mask_np if m_axis is None else np.take(mask_np, b, axis=m_axis) for b in range(B)]
    y = f(*args)
    for b in range(B):
        xb = x64 if x_axis is None else np.take(x64, b, axis=x_axis)
        assert_close(y[b], ref(xb, axis, masks[b], log))
    targets, text = custom_call_targets(f, *args)
    assert targets == [f"jk_{op}"] and "while" not in text


def test_vmap_nested(rng):
    x, x64 = randn(rng, (2, 4, 3, 6), jnp.float32)
    mask = rng.random((3, 1, 6)) < 0.6
    f = jax.vmap(jax.vmap(lambda a, m: jk.softmax(a, where=m), in_axes=(1, 0)), in_axes=(0, None))
    y = f(x, jnp.asarray(mask))
    for i in range(2):
        for j in range(3):
            assert_close(y[i, j], ref(x64[i, :, j], -1, mask[j], False))
    assert custom_call_targets(f, x, jnp.asarray(mask))[0] == ["jk_softmax"]


# ---- statistics / apply (sharding along the axis) -----------------------------------------------------
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape,axis", [((6, 100), -1), ((5, 33, 7), 1), ((40, 3), 0), ((3, 5000), -1)])
@pytest.mark.parametrize("masked", [False, True])
def test_stats_apply_split(rng, dtype, shape, axis, masked):
    """Two halves of the axis: local statistics combined as the sharded path will, then apply."""
    x, x64 = randn(rng, shape, dtype, scale=2.0)
    mask = (rng.random(shape) < 0.7) if masked else None
    if masked:
        mask[(0,) * len(shape)] = True
    n = shape[axis]
    h = n // 2
    parts = [(slice(0, h)), (slice(h, n))]
    ms, ss = [], []
    for sl in parts:
        idx = [slice(None)] * len(shape); idx[axis] = sl; idx = tuple(idx)
        m, s = softmax_stats(x[idx], axis=axis, where=None if mask is None else jnp.asarray(mask[idx]))
        assert m.dtype == jnp.float32 and m.shape == tuple(d for k, d in enumerate(x[idx].shape) if k != axis % len(shape))
        ms.append(np.asarray(m)); ss.append(np.asarray(s))
    M = np.maximum(ms[0], ms[1])
    with np.errstate(all="ignore"):
        S = sum(np.where(mk == -np.inf, 0.0, sk * np.exp(mk - M)) for mk, sk in zip(ms, ss))
    for log in (False, True):
        y = softmax_apply(x, jnp.asarray(M, jnp.float32), jnp.asarray(S, jnp.float32), axis=axis,
                          where=None if mask is None else jnp.asarray(mask), log=log)
        assert_close(y, ref(x64, axis, mask, log), dtype=dtype, scale=2.0)


def test_stats_empty_rows_and_vmap(rng):
    x, _ = randn(rng, (3, 0), jnp.float32)
    m, s = softmax_stats(x)
    assert m.shape == (3,) and np.all(np.asarray(m) == -np.inf) and np.all(np.asarray(s) == 0)
    x, x64 = randn(rng, (4, 3, 10), jnp.float32)
    mk, sk = jax.vmap(lambda a: softmax_stats(a), in_axes=1)(x)
    assert mk.shape == (3, 4)
    assert_close(mk, np.max(x64, -1).T)
    yv = jax.vmap(lambda a, m, s: softmax_apply(a, m, s), in_axes=(1, 0, 0))(x, mk, sk)
    assert_close(yv, np.swapaxes(ref(x64), 0, 1))
    assert custom_call_targets(jax.vmap(lambda a: softmax_stats(a)[0], in_axes=1), x)[0] == ["jk_softmax_stats"]


# ---- bad input, zero size, inputs untouched ------------------------------------------------------------
@pytest.mark.parametrize("op", OPS)
def test_bad_inputs_raise_before_lowering(op):
    fn = OPS[op][0]
    x = jnp.ones((3, 4), jnp.float32)
    with pytest.raises(TypeError, match=f"{op}: argument 'x'.*dtype"):
        fn(jnp.ones((3, 4), jnp.int32))
    with pytest.raises(TypeError, match=f"{op}: argument 'x'"):
        fn([1.0, 2.0])
    with pytest.raises(ValueError, match=f"{op}: argument 'axis'"):
        fn(x, axis=2)
    with pytest.raises(TypeError, match=f"{op}: argument 'axis'"):
        fn(x, axis=(0, 1))
    with pytest.raises(ValueError, match=f"{op}: argument 'x'.*rank"):
        fn(jnp.float32(1.0))
    with pytest.raises(TypeError, match=f"{op}: argument 'where'.*bool"):
        fn(x, where=jnp.ones((3, 4), jnp.float32))
    with pytest.raises(ValueError, match=f"{op}: argument 'where'.*broadcastable"):
        fn(x, where=jnp.ones((3, 5), bool))
    with pytest.raises(ValueError, match=f"{op}: argument 'where'.*broadcastable"):
        fn(x, where=jnp.ones((2, 3, 4), bool))
    with pytest.raises(ValueError, match="softmax_apply: argument 'row_max'"):
        softmax_apply(x, jnp.ones((4,), jnp.float32), jnp.ones((3,), jnp.float32))
    with pytest.raises(TypeError, match="softmax_apply: argument 'row_sum'"):
        softmax_apply(x, jnp.ones((3,), jnp.float32), jnp.ones((3,), jnp.bfloat16))


def _call(target, out, *args, **attrs):
    return jax.ffi.ffi_call(target, out)(*args, **attrs)


@pytest.mark.parametrize("target", ["jk_softmax", "jk_log_softmax"])
def test_handler_validation(target):
    x = jnp.ones((3, 4), jnp.float32)
    none = jnp.zeros((0,), bool)
    out = jax.ShapeDtypeStruct((3, 4), jnp.float32)
    cases = [
        (dict(), (jnp.ones((3, 4), jnp.int32), none), out, dict(axis=np.int64(-1)), "'x'"),
        (dict(), (x, none), out, dict(axis=np.int64(5)), "'axis'"),
        (dict(), (x, none), jax.ShapeDtypeStruct((3, 5), jnp.float32), dict(axis=np.int64(1)), "'y'"),
        (dict(), (x, none), jax.ShapeDtypeStruct((3, 4), jnp.bfloat16), dict(axis=np.int64(1)), "'y'"),
        (dict(), (x, jnp.ones((3, 4), jnp.int8)), out, dict(axis=np.int64(1)), "'mask'"),
        (dict(), (x, jnp.ones((3, 2), bool)), out, dict(axis=np.int64(1)), "'mask'"),
        (dict(), (x, jnp.ones((4,), bool)), out, dict(axis=np.int64(1)), "'mask'"),
        (dict(), (jnp.ones((), jnp.float32), none), jax.ShapeDtypeStruct((), jnp.float32), dict(axis=np.int64(0)),
         "'x'"),
    ]
    for _, args, o, attrs, arg in cases:
        with pytest.raises(Exception, match=f"{target}: argument {arg}"):
            jax.block_until_ready(_call(target, o, *args, **attrs))


def test_handler_validation_stats_apply():
    x = jnp.ones((3, 4), jnp.float32)
    none = jnp.zeros((0,), bool)
    f32 = lambda *s: jax.ShapeDtypeStruct(s, jnp.float32)
    with pytest.raises(Exception, match="jk_softmax_stats: argument 'row_max'"):
        jax.block_until_ready(_call("jk_softmax_stats", (f32(4), f32(3)), x, none, axis=np.int64(1)))
    with pytest.raises(Exception, match="jk_softmax_stats: argument 'row_sum'"):
        jax.block_until_ready(_call("jk_softmax_stats", (f32(3), jax.ShapeDtypeStruct((3,), jnp.float16)), x, none,
                                    axis=np.int64(1)))
    with pytest.raises(Exception, match="jk_softmax_apply: argument 'row_sum'"):
        jax.block_until_ready(_call("jk_softmax_apply", f32(3, 4), x, none, jnp.ones(3), jnp.ones(4),
                                    axis=np.int64(1)))
    with pytest.raises(Exception, match="jk_log_softmax_apply: argument 'axis'"):
        jax.block_until_ready(_call("jk_log_softmax_apply", f32(3, 4), x, none, jnp.ones(3), jnp.ones(3),
                                    axis=np.int64(-3)))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape,axis", [((0, 5), -1), ((5, 0), -1), ((5, 0), 0), ((0,), 0), ((2, 0, 3), 1)])
def test_zero_size(op, shape, axis):
    fn = OPS[op][0]
    x = jnp.zeros(shape, jnp.bfloat16)
    y = fn(x, axis=axis)
    assert y.shape == shape and y.dtype == jnp.bfloat16
    y = fn(x, axis=axis, where=jnp.ones(shape, bool))
    assert y.shape == shape


def test_inputs_not_modified(rng):
    x, x64 = randn(rng, (16, 100), jnp.float32)
    mask = jnp.asarray(rng.random((16, 100)) < 0.5)
    before, mbefore = np.asarray(x).copy(), np.asarray(mask).copy()
    jax.block_until_ready(jax.jit(lambda a, m: jk.softmax(a, where=m) + jk.log_softmax(a, where=m))(x, mask))
    np.testing.assert_array_equal(np.asarray(x), before)
    np.testing.assert_array_equal(np.asarray(mask), mbefore)


# ---- properties -------------------------------------------------------------------------------------------
@st.composite
def _problem(draw):
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(0, 7), min_size=rank, max_size=rank)))
    axis = draw(st.integers(-rank, rank - 1))
    dtype = draw(st.sampled_from(FLOAT_DTYPES))
    mask_kind = draw(st.sampled_from(["none", "full", "broadcast"]))
    keep = tuple(draw(st.lists(st.booleans(), min_size=rank, max_size=rank)))
    scale = draw(st.sampled_from([1.0, 30.0, 1e3]))
    seed = draw(st.integers(0, 2**31 - 1))
    return shape, axis, dtype, mask_kind, keep, scale, seed


@given(_problem(), st.sampled_from(list(OPS)))
def test_property_random_shapes(problem, op):
    shape, axis, dtype, mask_kind, keep, scale, seed = problem
    rng = np.random.default_rng(seed)
    x, x64 = randn(rng, shape, dtype, scale=scale)
    mask = None
    if mask_kind != "none":
        ms = shape if mask_kind == "full" else tuple(d if k else 1 for d, k in zip(shape, keep))
        mask = rng.random(ms) < 0.6
    check(op, x, x64, axis=axis, mask=mask)


# ---- GPU only: past 2^31 elements (64-bit indexing) -----------------------------------------------------
@pytest.mark.large
@pytest.mark.parametrize("op", OPS)
def test_large_rows_past_2_31(op):
    fn, _, log = OPS[op]
    rows, n = 49152, 65536  # 3.2e9 bfloat16 elements
    x = jax.random.normal(jax.random.key(0), (rows, n), jnp.bfloat16)
    y = fn(x)
    pick = np.array([0, 1, 32767, 32768, rows // 2, rows - 2, rows - 1])
    xs = np.asarray(x[pick].astype(jnp.float32), np.float64)
    assert_close(np.asarray(y[pick].astype(jnp.float32)), ref(xs, -1, None, log), dtype=jnp.bfloat16)
    del y
    z = fn(x.reshape(2, rows // 2, n), axis=0)
    zs = np.asarray(z[:, 5, :64].astype(jnp.float32), np.float64)
    xs = np.asarray(x.reshape(2, rows // 2, n)[:, 5, :64].astype(jnp.float32), np.float64)
    assert_close(zs, ref(xs, 0, None, log), dtype=jnp.bfloat16)


_CLUSTER_CHECK = """
import jax, jax.numpy as jnp, numpy as np, jax_kernels as jk
for n in (8200, 16384, 40000, 65536):
    for dt in (jnp.float32, jnp.bfloat16):
        x = jax.random.normal(jax.random.key(n), (5, n), dt)
        mask = jnp.arange(n) % 3 != 0
        for fn, nn in ((jk.softmax, jax.nn.softmax), (jk.log_softmax, jax.nn.log_softmax)):
            y = np.asarray(fn(x, where=mask).astype(jnp.float32))
            r = np.asarray(nn(x.astype(jnp.float32), where=mask))
            np.testing.assert_allclose(y, r, rtol=2e-2, atol=1e-6 if dt == jnp.float32 else 2e-2)
print("cluster ok")
"""


@pytest.mark.skipif(not ON_GPU, reason="thread-block clusters: GPU only")
def test_cluster_tier_opt_in():
    env = {**os.environ, "JK_SOFTMAX_MAX_CLUSTER": "8"}
    p = subprocess.run([sys.executable, "-c", _CLUSTER_CHECK], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "cluster ok" in p.stdout, p.stderr[-3000:]


# Every 16-bit block-tier layout and short-row setting (the knobs are read once per process): row lengths
# around the tier bounds (1024 / 16384; CTA widths step every 1024 columns), odd lengths (scalar path),
# a partial last pack of threads, masks, and degenerate rows, against float64 NumPy.
_HALF_TIER_CHECK = """
import numpy as np, jax.numpy as jnp, jax_kernels as jk
def ref(x, live, log):
    xs = np.where(live, x, -np.inf)
    with np.errstate(all="ignore"):
        m = xs.max(-1, keepdims=True); t = xs - m; s = np.where(live, np.exp(t), 0).sum(-1, keepdims=True)
        out = t - np.log(s) if log else np.exp(t) / s
    return np.where(live, out, -np.inf if log else 0.0)
rng = np.random.default_rng(0)
for n in (8, 32, 120, 128, 136, 256, 1024, 1032, 2047, 2056, 3000, 8192, 8200, 12000, 16376, 16384, 16392):
    x = (3 * rng.standard_normal((6, n))).astype(np.float32)
    x[3, n // 2] = np.nan                       # poisons row 3 only
    live = rng.random((6, n)) < 0.7
    live[4] = False                             # no live entry
    for dt, tol in ((jnp.bfloat16, 1.6e-2), (jnp.float16, 2e-3), (jnp.float32, 1e-5)):
        xj = jnp.asarray(x, dt)
        x64 = np.asarray(xj.astype(jnp.float32), np.float64)
        for fn, log in ((jk.softmax, False), (jk.log_softmax, True)):
            for mask in (None, live):
                lv = np.ones_like(live) if mask is None else mask
                y = np.asarray(fn(xj, where=None if mask is None else jnp.asarray(mask)).astype(jnp.float32))
                np.testing.assert_allclose(y, ref(x64, lv, log), rtol=tol * 4, atol=tol * 4,
                                           err_msg=f"n={n} {dt} log={log} mask={mask is not None}")
# Many rows per CTA (the persistent bulk tier cycles its stages and barrier phases many times).
import jax
for rows, n in ((20000, 2056), (2400, 16384), (600, 32768)):
    for dt, tol in ((jnp.bfloat16, 1.6e-2), (jnp.float16, 2e-3)):
        xj = jax.random.normal(jax.random.key(n), (rows, n), dt)
        x64 = np.asarray(xj.astype(jnp.float32), np.float64)
        for fn, log in ((jk.softmax, False), (jk.log_softmax, True)):
            y = np.asarray(fn(xj).astype(jnp.float32))
            np.testing.assert_allclose(y, ref(x64, np.ones(x64.shape, bool), log), rtol=tol * 4, atol=tol * 4,
                                       err_msg=f"rows={rows} n={n} {dt} log={log}")
print("half tiers ok")
"""


@pytest.mark.skipif(not ON_GPU, reason="the CUDA tier knobs: GPU only")
@pytest.mark.parametrize("knob", ["JK_SOFTMAX_HALF_BLOCK=floats16", "JK_SOFTMAX_HALF_BLOCK=floats32",
                                  "JK_SOFTMAX_HALF_BLOCK=packed32", "JK_SOFTMAX_HALF_BLOCK=bulk",
                                  "JK_SOFTMAX_SHORT_ROWS=1", "JK_SOFTMAX_SHORT_ROWS=4",
                                  "JK_SOFTMAX_LANE_PACKS=1", "JK_SOFTMAX_LANE_PACKS=4",
                                  "JK_SOFTMAX_HALF_WIDE=0", "JK_SOFTMAX_F32_ELEMS=16",
                                  "JK_SOFTMAX_F32_ELEMS=32", "JK_SOFTMAX_STATS=pair",
                                  "JK_SOFTMAX_STATS=keep"])
def test_half_tier_knobs(knob):
    name, value = knob.split("=")
    env = {**os.environ, name: value}
    p = subprocess.run([sys.executable, "-c", _HALF_TIER_CHECK], env=env, capture_output=True, text=True,
                       timeout=240)
    assert p.returncode == 0 and "half tiers ok" in p.stdout, p.stderr[-3000:]
