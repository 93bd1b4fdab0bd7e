"""Long rows: the ring tier (cuda/common/long_rows.cuh; softmax_long.cuh, norm_long.cu) against float64 NumPy.

On a GPU every test runs under the default dispatch and under each forced ring shape (JK_SOFTMAX_LONG /
JK_NORM_LONG = "ring C U L", read at every launch): C CTAs per row (the part n / C must be whole 16-byte
packs, else the other tiers), chunks of U * 512 packs (8192 float32 / 16384 16-bit elements at U = 4), at
least L slots of the 7 (U = 4) or 14 (U = 2) kept for the next rows: rows of more than 4 (U = 4) chunks keep
a tail outside the ring, read twice. Row lengths cross those limits: partial last chunks, a one-pack tail,
parts not a whole number of packs (fallback), odd lengths (the scalar fallback), more rows than CTAs (the
ring wraps), fewer rows than SMs. The ring tier takes unmasked rows only: masked rows go to the other tiers.
On the CPU the knobs do nothing: one pass of each test.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_kernels as jk
from conftest import FLOAT_DTYPES, ON_GPU, assert_close, randn

RINGS = ["default", "ring 1 4 3", "ring 1 2 6", "ring 2 4 3", "ring 4 4 3"] if ON_GPU else ["default"]

# (rows, n): see the module docstring; 16-bit chunks are twice as long in elements, so the same lengths
# land on other boundaries there (65536: 4 whole chunks; 131080: 4 chunks + a tail).
ROWS = [(3, 1028), (5, 8196), (300, 4100), (2, 16384), (3, 16392), (2, 32768), (2, 32772), (3, 32770),
        (2, 40000), (2, 65536), (3, 65544), (2, 131080)]
if not ON_GPU:  # the CPU twin has no tiers here (test_softmax.py / test_norms.py cover it): a few lengths
    ROWS = [(3, 1028), (3, 32770), (2, 65536)]


def _ring(monkeypatch, ring, knob):
    if ring != "default":
        monkeypatch.setenv(knob, ring)
        # The norms' cluster tier (norm_cluster.cu) comes first in their dispatch: off, so the ring runs.
        monkeypatch.setenv("JK_NORM_CLUSTER", "off")


def np_softmax(x, log=False):
    m = x.max(-1, keepdims=True)
    t = x - m
    s = np.exp(t).sum(-1, keepdims=True)
    return t - np.log(s) if log else np.exp(t) / s


def check_softmax_rows(rng, dtype, rows, n, log):
    """(rows, n) random rows through the jitted op against float64 NumPy, under whatever knobs are set."""
    x, xf = randn(rng, (rows, n), dtype, scale=3.0)
    fn = jk.log_softmax if log else jk.softmax
    y = jax.jit(lambda v: fn(v))(x)
    assert y.dtype == dtype and y.shape == (rows, n)
    assert_close(y, np_softmax(xf, log), dtype)


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("rows,n", ROWS)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_long_rows(monkeypatch, rng, ring, dtype, rows, n, log):
    _ring(monkeypatch, ring, "JK_SOFTMAX_LONG")
    check_softmax_rows(rng, dtype, rows, n, log)


def check_special_rows(seed):
    """Rows of 40000: -inf, NaN and +inf rows are NaN everywhere (as jax.nn); huge magnitudes stay exact."""
    n = 40000
    r = np.random.default_rng(seed)
    x = r.standard_normal((6, n)).astype(np.float32)
    x[0] = -np.inf
    x[1, 123] = np.nan
    x[2, 39999] = np.inf
    x[3] *= 1e4
    x[4] = x[4] * 0.1 - 3e38
    for log in (False, True):
        fn = jk.log_softmax if log else jk.softmax
        y = np.asarray(jax.jit(lambda v: fn(v))(jnp.asarray(x)))
        assert np.isnan(y[:3]).all()
        assert_close(y[3:], np_softmax(x[3:].astype(np.float64), log), jnp.float32, scale=4.0)


@pytest.mark.parametrize("ring", RINGS)
def test_softmax_long_special_rows(monkeypatch, ring):
    """-inf, NaN and +inf rows are NaN everywhere (as jax.nn); huge magnitudes stay exact; rows apart."""
    _ring(monkeypatch, ring, "JK_SOFTMAX_LONG")
    check_special_rows(7)


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_softmax_long_masked_falls_back(monkeypatch, rng, ring, dtype):
    _ring(monkeypatch, ring, "JK_SOFTMAX_LONG")
    x, xf = randn(rng, (3, 40000), dtype)
    where = rng.random((3, 40000)) < 0.7
    y = jax.jit(lambda v, w: jk.softmax(v, where=w))(x, jnp.asarray(where))
    want = np.where(where, np_softmax(np.where(where, xf, -np.inf)), 0.0)
    assert_close(y, want, dtype)


# kClusterRowsRegisters (cuda/softmax/softmax_cluster.cuh), forced by JK_SOFTMAX_CLUSTER_ROWS = "E R" (E
# elements per thread, 64: 16-bit packed (float32 then keeps the default tiers); R resident CTAs per SM, 0: a
# cluster per row, -1: as many as fit): rows over one CTA's 512 x 32 elements, clusters of 2-8; (600, 20000)
# and (600, 40000) loop every persistent cluster over several rows (both slot sets, both phases of each set's
# barrier). Each knob also runs one way of exchanging the CTAs' statistics (JK_CLUSTER_EXCHANGE = its index
# mod 2: a cluster barrier per row, or common/cluster_exchange.cuh).
CLUSTERS = ["32 2", "16 2", "32 0", "32 -1", "64 -1", "64 0"] if ON_GPU else []
CLUSTER_ROWS = [(3, 16392), (600, 20000), (2, 32768), (3, 32776), (600, 40000), (2, 65536), (3, 65544), (2, 131072)]


@pytest.mark.parametrize("knob", CLUSTERS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("rows,n", CLUSTER_ROWS)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_cluster_rows(monkeypatch, rng, knob, dtype, rows, n, log):
    monkeypatch.setenv("JK_SOFTMAX_CLUSTER_ROWS", knob)
    monkeypatch.setenv("JK_CLUSTER_EXCHANGE", str(CLUSTERS.index(knob) % 2))
    check_softmax_rows(rng, dtype, rows, n, log)


@pytest.mark.parametrize("knob", CLUSTERS)
def test_softmax_cluster_special_and_masked_rows(monkeypatch, rng, knob):
    """As test_softmax_long_special_rows, through the cluster tier; then a mask (applied in the kernel)."""
    monkeypatch.setenv("JK_SOFTMAX_CLUSTER_ROWS", knob)
    check_special_rows(8)
    n = 40000
    r = np.random.default_rng(8)
    where = r.random((6, n)) < 0.7
    where[5] = False  # a fully masked row: zeros (softmax), as jax.nn
    xs, _ = randn(rng, (6, n), jnp.float32)
    check_masked_softmax(xs, where)


def check_masked_softmax(xs, where):
    """float32 rows under a mask (applied in the kernel) whose last row is fully masked: zeros, as jax.nn."""
    y = np.asarray(jax.jit(lambda v, w: jk.softmax(v, where=w))(xs, jnp.asarray(where)))
    xf = np.asarray(xs, np.float64)
    want = np.where(where, np_softmax(np.where(where, xf, -np.inf)), 0.0)
    assert_close(y[:-1], want[:-1], jnp.float32)
    assert (y[-1] == 0).all()


# How the 16-bit block tier and the cluster tiers get a row's statistics (JK_SOFTMAX_STATS, read at every launch;
# softmax_kernels.cuh PackedStats): the max then the sum ("two"), per-thread pairs merged once ("pair"), and pairs
# with softmax's exponentials kept in registers ("keep"; "keepfma": bfloat16's output scaled on the packed pairs,
# elsewhere the same as keep), under the default dispatch (16-bit rows up to 32768 on
# the block tier, float32 past 16384 on clusters) and each forced cluster shape ("32 -1": 16-bit rows widened at
# 32 elements; "64 -1": packed at 64). (600, n) rows loop the persistent clusters.
STATS = ["two", "pair", "keep", "keepfma"] if ON_GPU else []
STATS_CLUSTERS = ["default", "32 -1", "64 -1"]
STATS_ROWS = [(3, 2056), (600, 20000), (3, 32776), (600, 40000), (3, 65544)]


def _stats(monkeypatch, stats, cluster):
    monkeypatch.setenv("JK_SOFTMAX_STATS", stats)
    if cluster != "default":
        monkeypatch.setenv("JK_SOFTMAX_CLUSTER_ROWS", cluster)


@pytest.mark.parametrize("stats", STATS)
@pytest.mark.parametrize("cluster", STATS_CLUSTERS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("rows,n", STATS_ROWS)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_stats_knob(monkeypatch, rng, stats, cluster, dtype, rows, n, log):
    _stats(monkeypatch, stats, cluster)
    check_softmax_rows(rng, dtype, rows, n, log)


@pytest.mark.parametrize("stats", STATS)
@pytest.mark.parametrize("cluster", STATS_CLUSTERS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("n", [20000, 40000])
def test_softmax_stats_special_rows(monkeypatch, stats, cluster, dtype, n):
    """-inf, NaN and +inf rows are NaN; huge magnitudes stay right; rows of mostly -inf (threads whose entries
    are all -inf: the kept exponentials' zero shift) and of one finite entry."""
    _stats(monkeypatch, stats, cluster)
    check_special_rows_of(dtype, n)


def check_special_rows_of(dtype, n):
    big, low = (1e3, -6e4) if dtype == jnp.float16 else (1e4, -3e38)
    r = np.random.default_rng(n)
    x = r.standard_normal((7, n)).astype(np.float32)
    x[0] = -np.inf
    x[1, 123] = np.nan
    x[2, n - 1] = np.inf
    x[3] *= big
    x[4] = x[4] * 0.1 + low
    x[5, 100:] = -np.inf
    x[6, : n - 7] = -np.inf
    x[6, n - 6:] = -np.inf
    xj = jnp.asarray(x, dtype)
    x64 = np.asarray(xj.astype(jnp.float32), np.float64)
    for log in (False, True):
        fn = jk.log_softmax if log else jk.softmax
        y = np.asarray(jax.jit(lambda v: fn(v))(xj).astype(jnp.float32), np.float64)
        assert np.isnan(y[:3]).all()
        with np.errstate(invalid="ignore"):
            want = np_softmax(x64[3:], log)
        assert_close(y[3:], want, dtype, scale=4.0)
        assert y[6, n - 7] == (0.0 if log else 1.0)



# Float32 rows held partly in registers, partly in shared memory (softmax_cluster.cuh ClusterRowsHybridKernel, the
# default past 16384 columns; JK_SOFTMAX_HYBRID = 2: 6 + 10 packs per thread (the default), 3: 4 + 12; read at every
# launch): one CTA per row up to 512 threads x the packs, then clusters of 2-8 (65536: 2, 131072: 4). Odd lengths
# (last packs partly or wholly past the row, in registers and in the staged slots), (600, n) rows loop the
# persistent grid (both exchange parities, the staged slots refilled while the row drains).
HYBRID = ["2", "3"] if ON_GPU else []
HYBRID_ROWS = [(3, 16392), (600, 20000), (2, 32768), (3, 32776), (600, 40000), (2, 65536), (3, 65544),
               (600, 70000), (2, 131072), (2, 131076)]


@pytest.mark.parametrize("knob", HYBRID)
@pytest.mark.parametrize("dtype", [jnp.float32])
@pytest.mark.parametrize("rows,n", HYBRID_ROWS)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_hybrid_rows(monkeypatch, rng, knob, dtype, rows, n, log):
    monkeypatch.setenv("JK_SOFTMAX_HYBRID", knob)
    check_softmax_rows(rng, dtype, rows, n, log)


@pytest.mark.parametrize("knob", HYBRID)
@pytest.mark.parametrize("dtype", [jnp.float32])
@pytest.mark.parametrize("n", [20000, 40000, 70000])
def test_softmax_hybrid_special_rows(monkeypatch, knob, dtype, n):
    """As test_softmax_stats_special_rows, on the hybrid rows; masked rows keep the other tiers."""
    monkeypatch.setenv("JK_SOFTMAX_HYBRID", knob)
    check_special_rows_of(dtype, n)
    r = np.random.default_rng(n)
    where = r.random((4, n)) < 0.7
    where[3] = False
    check_masked_softmax(jnp.asarray(r.standard_normal((4, n)).astype(np.float32)), where)

def np_layer_norm(x, s, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    y = (x - mu) * rstd
    if s is not None:
        y = y * s
    if b is not None:
        y = y + b
    return y, mu[..., 0], rstd[..., 0]


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("rows,n", ROWS)
def test_layer_norm_long_rows(monkeypatch, rng, ring, dtype, rows, n):
    _ring(monkeypatch, ring, "JK_NORM_LONG")
    x, xf = randn(rng, (rows, n), dtype, scale=2.0, loc=0.5)
    s, sf = randn(rng, (n,), dtype)
    b, bf = randn(rng, (n,), dtype)
    y, mean, rstd = jax.jit(lambda v, s, b: jk.layer_norm(v, s, b, return_stats=True))(x, s, b)
    ey, em, er = np_layer_norm(xf, sf, bf)
    assert mean.shape == (rows,) and rstd.shape == (rows,)
    assert_close(y, ey, dtype, scale=2.0)
    assert_close(mean, em, jnp.float32, scale=4.0)
    assert_close(rstd, er, jnp.float32, scale=4.0)


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("rows,n", ROWS)
def test_rms_norm_long_rows(monkeypatch, rng, ring, dtype, rows, n):
    _ring(monkeypatch, ring, "JK_NORM_LONG")
    x, xf = randn(rng, (rows, n), dtype, scale=2.0)
    s, sf = randn(rng, (n,), dtype)
    y = jax.jit(lambda v, s: jk.rms_norm(v, s))(x, s)
    assert_close(y, xf / np.sqrt((xf * xf).mean(-1, keepdims=True) + 1e-6) * sf, dtype, scale=2.0)


@pytest.mark.parametrize("ring", RINGS)
def test_norm_long_no_params_large_mean(monkeypatch, rng, ring):
    """No scale/bias; a mean large against the spread (the shifted statistics keep the variance)."""
    _ring(monkeypatch, ring, "JK_NORM_LONG")
    x, xf = randn(rng, (4, 65536), jnp.float32, scale=0.1, loc=1e4)
    y, mean, rstd = jax.jit(lambda v: jk.layer_norm(v, return_stats=True))(x)
    ey, em, er = np_layer_norm(xf, None, None)
    assert_close(rstd, er, jnp.float32, rtol=1e-3, atol=1e-3)
    assert_close(y, ey, jnp.float32, rtol=1e-2, atol=1e-2)
    y = jax.jit(lambda v: jk.rms_norm(v))(x)
    assert_close(y, xf / np.sqrt((xf * xf).mean(-1, keepdims=True) + 1e-6), jnp.float32)


@pytest.mark.parametrize("ring", RINGS)
def test_norm_long_grouped_scale(monkeypatch, rng, ring):
    """vmap over scale: one parameter row per group of rows (the kernel's grouped-parameter contract)."""
    _ring(monkeypatch, ring, "JK_NORM_LONG")
    x, xf = randn(rng, (3, 2, 32768), jnp.float32)
    s, sf = randn(rng, (3, 32768), jnp.float32)
    y = jax.jit(jax.vmap(lambda v, s: jk.rms_norm(v, s)))(x, s)
    assert_close(y, xf / np.sqrt((xf * xf).mean(-1, keepdims=True) + 1e-6) * sf[:, None, :], jnp.float32)


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("dtype,n", [(jnp.float32, 16392), (jnp.bfloat16, 32776)])
def test_norm_long_grouped_params_many_rows(monkeypatch, rng, ring, dtype, n):
    """vmap over scale and bias with more rows than CTAs: a CTA's rows cross parameter groups."""
    _ring(monkeypatch, ring, "JK_NORM_LONG")
    groups, rows = (5, 64) if ON_GPU else (2, 3)
    x, xf = randn(rng, (groups, rows, n), dtype)
    s, sf = randn(rng, (groups, n), dtype)
    b, bf = randn(rng, (groups, n), dtype)
    y = jax.jit(jax.vmap(lambda v, s, b: jk.layer_norm(v, s, b)))(x, s, b)
    ey, _, _ = np_layer_norm(xf, sf[:, None, :], bf[:, None, :])
    assert_close(y, ey, dtype, scale=2.0)
    y = jax.jit(jax.vmap(lambda v, s: jk.rms_norm(v, s)))(x, s)
    assert_close(y, xf / np.sqrt((xf * xf).mean(-1, keepdims=True) + 1e-6) * sf[:, None, :], dtype, scale=2.0)


# The norms' cluster tier (cuda/norm/norm_cluster.cu), JK_NORM_CLUSTER = "F R": rows longer than F columns
# (0: the default rule, float32 n >= 16384, 16-bit n > 32768; 2048: also rows that fit one CTA, no
# cluster), R resident clusters (-1: as many as fit, 0: one per row, 2: 2 CTAs per SM). The default dispatch
# runs it too (the long-row tests above); here every grid shape, with statistics, grouped parameters, a
# large mean, and rows crossing the cluster sizes (16384 f32 = one CTA; 131072 = 8 CTAs of 16-bit). Each knob
# with one way of exchanging the statistics, as the softmax cluster tests.
NORM_CLUSTERS = ["0 -1", "0 0", "2048 -1", "0 2"] if ON_GPU else []
NORM_CLUSTER_ROWS = [(3, 4104), (5, 16384), (600, 20000), (2, 32768), (3, 32776), (600, 40000), (2, 65536),
                     (3, 65544), (2, 131072)]


@pytest.mark.parametrize("knob", NORM_CLUSTERS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("rows,n", NORM_CLUSTER_ROWS)
def test_norm_cluster_rows(monkeypatch, rng, knob, dtype, rows, n):
    monkeypatch.setenv("JK_NORM_CLUSTER", knob)
    monkeypatch.setenv("JK_CLUSTER_EXCHANGE", str(NORM_CLUSTERS.index(knob) % 2))
    check_norm_rows(rng, dtype, rows, n)


def check_norm_rows(rng, dtype, rows, n):
    x, xf = randn(rng, (rows, n), dtype, scale=2.0, loc=0.5)
    s, sf = randn(rng, (n,), dtype)
    b, bf = randn(rng, (n,), dtype)
    y, mean, rstd = jax.jit(lambda v, s, b: jk.layer_norm(v, s, b, return_stats=True))(x, s, b)
    ey, em, er = np_layer_norm(xf, sf, bf)
    assert_close(y, ey, dtype, scale=2.0)
    assert_close(mean, em, jnp.float32, scale=4.0)
    assert_close(rstd, er, jnp.float32, scale=4.0)
    y = jax.jit(lambda v, s: jk.rms_norm(v, s))(x, s)
    assert_close(y, xf / np.sqrt((xf * xf).mean(-1, keepdims=True) + 1e-6) * sf, dtype, scale=2.0)
    y = jax.jit(lambda v: jk.layer_norm(v))(x)  # no parameters
    assert_close(y, np_layer_norm(xf, None, None)[0], dtype, scale=2.0)


@pytest.mark.parametrize("knob", NORM_CLUSTERS)
def test_norm_cluster_large_mean_and_groups(monkeypatch, rng, knob):
    monkeypatch.setenv("JK_NORM_CLUSTER", knob)
    check_norm_large_mean_and_groups(rng)


def check_norm_large_mean_and_groups(rng):
    x, xf = randn(rng, (4, 65536), jnp.float32, scale=0.1, loc=1e4)
    y, mean, rstd = jax.jit(lambda v: jk.layer_norm(v, return_stats=True))(x)
    ey, em, er = np_layer_norm(xf, None, None)
    assert_close(rstd, er, jnp.float32, rtol=1e-3, atol=1e-3)
    assert_close(y, ey, jnp.float32, rtol=1e-2, atol=1e-2)
    for dtype, n in [(jnp.float32, 32768), (jnp.bfloat16, 65536)]:
        x, xf = randn(rng, (5, 40, n), dtype)
        s, sf = randn(rng, (5, n), dtype)
        b, bf = randn(rng, (5, n), dtype)
        y = jax.jit(jax.vmap(lambda v, s, b: jk.layer_norm(v, s, b)))(x, s, b)
        assert_close(y, np_layer_norm(xf, sf[:, None, :], bf[:, None, :])[0], dtype, scale=2.0)
        y = jax.jit(jax.vmap(lambda v, s: jk.rms_norm(v, s)))(x, s)
        assert_close(y, xf / np.sqrt((xf * xf).mean(-1, keepdims=True) + 1e-6) * sf[:, None, :], dtype, scale=2.0)


# The norms' float32 rows held partly in registers, partly in shared memory (norm_cluster.cuh ClusterRowsNormHybrid;
# RMSNorm's default past 16384 columns), JK_NORM_HYBRID = 1 (6 + 10 packs per thread) or 2 (4 + 12, RMSNorm's
# default): one CTA, then clusters (65536: 2 / 2; 131072: 4). 16-bit rows keep the default tiers (checked too).
NORM_HYBRID = ["1", "2"] if ON_GPU else []
NORM_HYBRID_ROWS = [(3, 16388), (600, 20000), (2, 32768), (3, 32776), (600, 40000), (2, 65536), (3, 65544),
                    (2, 131072)]


# The cluster and hybrid kernels' kLean forms (norm_cluster.cuh) and their plain forms, each forced by JK_NORM_LEAN
# (by default: lean for 16-bit rows and on the hybrid kernel, plain for float32 LayerNorm). Both stay reachable, so
# both are tested: rows of one CTA (16384 float32), persistent clusters over several rows, a padded last rank.
NORM_LEAN = ["0", "1"] if ON_GPU else []
NORM_LEAN_ROWS = [(3, 16384), (600, 40000), (3, 65544)]
# JK_NORM_PAIRS=1 (norm_cluster_pairs.cuh): the row-pairs form for every row past one CTA of the cluster tier, in
# clusters of 2-8 (float32 16388 ... 131072, 16-bit 32776 ... 262144): rows that fill every rank (kFull) and a padded
# last rank; one row (the second half idle) and odd row counts; float32 262144 (16 ranks) falls back to other tiers.
# JK_NORM_PAIRS_FULL=0: the checked form on rows that fill every rank. JK_NORM_PAIRS=0: the kernels it replaced by
# default (the cluster tier's two CTAs of 512 per SM, the hybrid).
NORM_PAIRS_ROWS = [(1, 16388), (3, 32768), (601, 40000), (2, 65536), (5, 65544), (3, 131072), (2, 262144)]
NORM_PAIRS_KNOBS = ([("JK_NORM_PAIRS", "1", rows, n) for rows, n in NORM_PAIRS_ROWS] +
                    [("JK_NORM_PAIRS_FULL", "0", rows, n) for rows, n in [(3, 65536), (2, 131072)]] +
                    [("JK_NORM_PAIRS", "0", rows, n) for rows, n in [(3, 32768), (600, 40000), (3, 65544)]] +
                    # lab: float32 rows of one CTA on the form, 4 packs a thread (4100: LayerNorm's last packs empty)
                    [("JK_NORM_PAIRS_SHORT", "1", rows, n) for rows, n in [(3, 4100), (601, 6000), (2, 8192)]])
# JK_NORM_FULL=0: 16-bit LayerNorm rows that fill every rank (65536) on the checked lean form, not kFull.
NORM_KNOB_ROWS = ([("JK_NORM_HYBRID", k, rows, n) for k in NORM_HYBRID for rows, n in NORM_HYBRID_ROWS] +
                  [("JK_NORM_LEAN", v, rows, n) for v in NORM_LEAN for rows, n in NORM_LEAN_ROWS] +
                  ([("JK_NORM_FULL", "0", rows, 65536) for rows in (3, 600)] if ON_GPU else []) +
                  (NORM_PAIRS_KNOBS if ON_GPU else []))


@pytest.mark.parametrize("env,value,rows,n", NORM_KNOB_ROWS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_norm_knob_rows(monkeypatch, rng, env, value, dtype, rows, n):
    monkeypatch.setenv(env, value)
    check_norm_rows(rng, dtype, rows, n)


@pytest.mark.parametrize("knob", NORM_HYBRID)
def test_norm_hybrid_large_mean_and_groups(monkeypatch, rng, knob):
    monkeypatch.setenv("JK_NORM_HYBRID", knob)
    check_norm_large_mean_and_groups(rng)


@pytest.mark.parametrize("env,value", [("JK_NORM_LEAN", v) for v in NORM_LEAN] +
                         ([("JK_NORM_PAIRS", "1")] if ON_GPU else []))
def test_norm_lean_large_mean(monkeypatch, rng, env, value):
    """16-bit rows far from zero: the lean and row-pairs forms' two passes take no shift (kUnshifted), and must stay
    exact; float32 rows far from zero, and grouped parameters (which the row-pairs form declines)."""
    monkeypatch.setenv(env, value)
    check_norm_large_mean_and_groups(rng)
    for dtype, loc, scale in [(jnp.bfloat16, 4096.0, 40.0), (jnp.float16, 1000.0, 1.0)]:
        x, xf = randn(rng, (4, 65536), dtype, scale=scale, loc=loc)
        y, mean, rstd = jax.jit(lambda v: jk.layer_norm(v, return_stats=True))(x)
        ey, em, er = np_layer_norm(xf, None, None)
        assert_close(mean, em, jnp.float32, rtol=1e-6, atol=0)
        assert_close(rstd, er, jnp.float32, rtol=1e-4, atol=0)
        assert_close(y, ey, dtype, scale=2.0)
