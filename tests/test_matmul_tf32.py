"""float32 at precision DEFAULT/HIGH: the Hopper TF32 tier (WgmmaTf32, cuda/matmul/matmul_wgmma_tf32.cuh) and
the mma.sync TF32 tier it replaces, against float64 NumPy.

WgmmaTf32 computes C^T = b^T a^T with 256 or 128 (M) x 128 (N) x 32 (K) tiles, TMA loads zero-filling the tails,
TMA stores clipped at the edges, a persistent grid. Shapes cross its boundaries: K tails inside the last
32-deep k-tile (K = 4, 36, 100, 1028), M and N not multiples of the tile (and N % 32 != 0 inside a 32-column
panel), more tiles than SMs, batches of distinct and broadcast matrices, vmap on any axis (strides that are
not whole matrices fall back to mma.sync). JK_MATMUL_TF32=wgmma forces the tier on every eligible shape,
=mma forces the mma.sync tier; JK_MATMUL_TF32_BM=128 the 128-row tile, JK_MATMUL_TF32_ROUND=1 a rounded in
shared memory instead of truncated (plain matmuls only: linear's kernels do not round), read at every launch. Elsewhere than a GPU only the default runs. HIGHEST never takes a TF32 tier: on a GPU its error must stay at float32
rounding while DEFAULT/HIGH show TF32's.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jax_kernels as jk
from conftest import ON_GPU, custom_call_targets, randn
from test_matmul import RES_SHAPES, _act64, linear_case

# variant -> environment: the default dispatch; the wgmma tier forced with its default tile (256 rows) and
# rounding (a truncated by the tensor cores), with 128-row tiles, with a's tiles rounded in shared memory;
# the mma.sync tier forced.
VARIANT_ENV = {
    "default": {},
    "wgmma": {"JK_MATMUL_TF32": "wgmma"},
    "wgmma128": {"JK_MATMUL_TF32": "wgmma", "JK_MATMUL_TF32_BM": "128"},
    "wgmma_round": {"JK_MATMUL_TF32": "wgmma", "JK_MATMUL_TF32_ROUND": "1"},
    "mma": {"JK_MATMUL_TF32": "mma"},
}
VARIANTS = list(VARIANT_ENV) if ON_GPU else ["default"]
LINEAR_VARIANTS = [v for v in VARIANTS if v != "wgmma_round"]  # linear's kernels do not round a


def _set_variant(monkeypatch, variant):
    for name, value in VARIANT_ENV[variant].items():
        monkeypatch.setenv(name, value)
    return variant


@pytest.fixture(params=VARIANTS)
def tf32_variant(request, monkeypatch):
    return _set_variant(monkeypatch, request.param)


@pytest.fixture(params=LINEAR_VARIANTS)
def tf32_linear_variant(request, monkeypatch):
    return _set_variant(monkeypatch, request.param)


def assert_tf32_close(out, ref, k):
    """TF32 inputs on a GPU (10-bit mantissa): |out - ref| <= 5e-3 (sqrt(K) + |ref|); exact elsewhere."""
    r, a = (5e-3, 5e-3) if ON_GPU else (1e-5, 1e-5)
    out = np.asarray(out, np.float64)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    np.testing.assert_allclose(out, ref, rtol=r, atol=a * np.sqrt(max(k, 1)))


SHAPES = [  # (M, K, N)
    (9, 4, 4), (255, 36, 132), (256, 32, 128), (257, 100, 260), (300, 1028, 136), (513, 64, 388),
    (130, 260, 36), (1000, 1000, 1000),
]


@pytest.mark.parametrize("mkn", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_tf32_shapes(rng, tf32_variant, mkn):
    m, k, n = mkn
    a, a64 = randn(rng, (m, k), jnp.float32)
    b, b64 = randn(rng, (k, n), jnp.float32)
    assert_tf32_close(jax.jit(jk.matmul)(a, b), a64 @ b64, k)


def test_tf32_more_tiles_than_sms(rng, tf32_variant):
    # 9 x 17 = 153 tiles of 256x128: every CTA of the persistent grid runs more than one tile on an H100/H200,
    # so the ring's phases and the epilogue's box buffers carry across tiles; tails on both sides.
    a, a64 = randn(rng, (2100, 260), jnp.float32)
    b, b64 = randn(rng, (260, 2060), jnp.float32)
    assert_tf32_close(jk.matmul(a, b), a64 @ b64, 260)


@pytest.mark.parametrize("shapes", [
    ((3, 130, 72), (3, 72, 136)), ((2, 1, 130, 64), (1, 3, 64, 264)), ((12, 260, 64), (12, 64, 520)),
    ((4, 100, 40), (40, 48)), ((5, 72), (2, 72, 136)), ((2, 300, 36), (2, 36, 260)),
], ids=str)
def test_tf32_batched(rng, tf32_variant, shapes):
    a, a64 = randn(rng, shapes[0], jnp.float32)
    b, b64 = randn(rng, shapes[1], jnp.float32)
    assert_tf32_close(jk.matmul(a, b), np.matmul(a64, b64), shapes[0][-1])


@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0), (1, None), (None, 2), (2, 1)], ids=str)
def test_tf32_vmap(rng, tf32_variant, axes):
    # Batch dims on inner axes give strides that are not whole matrices: the tier must step aside.
    B, m, k, n = 3, 140, 36, 132
    a_shape = {None: (m, k), 0: (B, m, k), 1: (m, B, k), 2: (m, k, B)}[axes[0]]
    b_shape = {None: (k, n), 0: (B, k, n), 1: (k, B, n), 2: (k, n, B)}[axes[1]]
    a, a64 = randn(rng, a_shape, jnp.float32)
    b, b64 = randn(rng, b_shape, jnp.float32)
    f = jax.vmap(jk.matmul, in_axes=axes)
    a_std = np.moveaxis(a64, axes[0], 0) if axes[0] is not None else a64
    b_std = np.moveaxis(b64, axes[1], 0) if axes[1] is not None else b64
    assert_tf32_close(f(a, b), np.matmul(a_std, b_std), k)
    targets, text = custom_call_targets(f, a, b)
    assert targets == ["jk_matmul"] and "dot_general" not in text and "stablehlo.while" not in text


@pytest.mark.parametrize("precision", [None, "DEFAULT", "HIGH", "HIGHEST"])
def test_tf32_precision_routing(rng, tf32_variant, precision):
    m, k, n = 300, 260, 264
    a, a64 = randn(rng, (m, k), jnp.float32)
    b, b64 = randn(rng, (k, n), jnp.float32)
    ref = a64 @ b64
    out = np.asarray(jk.matmul(a, b, precision=precision), np.float64)
    err = np.max(np.abs(out - ref)) / np.max(np.abs(ref))
    if precision == "HIGHEST" or not ON_GPU:
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5 * np.sqrt(k))
        assert err < 1e-5, err
    else:  # TF32 inputs: ~1e-3 relative, far from float32 rounding (and far from garbage)
        assert_tf32_close(out, ref, k)
        assert 1e-5 < err < 5e-3, err


def test_tf32_matches_jnp_error(rng, tf32_variant):
    # Ours against jnp's DEFAULT (XLA: TF32 on a GPU), both against float64: same order of error.
    m, k, n = 520, 1028, 392
    a, a64 = randn(rng, (m, k), jnp.float32)
    b, b64 = randn(rng, (k, n), jnp.float32)
    ref = a64 @ b64
    rel = lambda x: np.linalg.norm(np.asarray(x, np.float64) - ref) / np.linalg.norm(ref)  # noqa: E731
    ours, theirs = rel(jk.matmul(a, b)), rel(jnp.matmul(a, b))
    assert ours <= 4 * theirs + 1e-6, (ours, theirs)


def test_tf32_k_tail_reads_no_neighbour(rng, tf32_variant):
    # Batched matrices back to back: a K tail (36 = 32 + 4) must read zeros past each row's end, not the next
    # row's or matrix's elements (TMA zero fill), and N = 132 columns must not spill into the next row.
    a, a64 = randn(rng, (2, 260, 36), jnp.float32)
    b, b64 = randn(rng, (2, 36, 132), jnp.float32)
    big = jnp.full((2, 260, 132), 7.0, jnp.float32)
    out = jax.jit(lambda a, b, big: (jk.matmul(a, b), big + 1))(a, b, big)
    assert_tf32_close(out[0], np.matmul(a64, b64), 36)
    np.testing.assert_array_equal(np.asarray(out[1]), 8.0)


# ---- linear at DEFAULT precision: the epilogue on the TF32 tiers ------------------------------------
# Until session 5 the wgmma TF32 kernel stored a @ b and ignored bias, activation and residual: float32
# linear at DEFAULT/HIGH of >= 768^3 returned the bare product on Hopper (found by bench/sanitize_cases.py;
# every linear test above ran at HIGHEST). Each variant runs these; the largest shape reaches the wgmma
# tier by default (>= 768^3 multiply-adds), the others through JK_MATMUL_TF32=wgmma.


@pytest.mark.parametrize("activation", [None, "relu", "gelu", "gelu_tanh", "silu"])
@pytest.mark.parametrize("res", list(RES_SHAPES), ids=str)
@pytest.mark.parametrize("with_bias", [True, False])
def test_tf32_linear_epilogue(rng, tf32_linear_variant, activation, res, with_bias):
    # tails along M, N (inside a 32-column box) and K
    (x, w, bias, r), ref = linear_case(rng, 257, 100, 260, jnp.float32, with_bias, res)
    out = jax.jit(lambda *a: jk.linear(*a, activation=activation, residual=r))(x, w, bias)
    assert_tf32_close(out, ref(activation), 1)


@pytest.mark.parametrize("shapes", [
    ((1024, 768), (768, 1040), (1024, 1040)),    # >= 768^3: the wgmma tier by default; N tail
    ((2, 600, 520), (520, 776), (2, 1, 776)),    # batched, folded into M, residual broadcast over rows
    ((3, 300, 260), (3, 260, 392), (3, 300, 392)),  # distinct batch matrices
], ids=str)
def test_tf32_linear_large(rng, tf32_linear_variant, shapes):
    (xs, ws, rs) = shapes
    x, x64 = randn(rng, xs, jnp.float32)
    w, w64 = randn(rng, ws, jnp.float32, scale=1 / np.sqrt(ws[-2]))
    bias, b64 = randn(rng, (ws[-1],), jnp.float32)
    r, r64 = randn(rng, rs, jnp.float32)
    for act in ["gelu", "relu"]:
        out = jk.linear(x, w, bias, activation=act, residual=r)
        assert_tf32_close(out, _act64(act, np.matmul(x64, w64) + b64) + r64, 1)
