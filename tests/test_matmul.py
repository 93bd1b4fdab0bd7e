"""matmul / linear against float64 NumPy, on whichever backend JAX has.

Shapes cross every CUDA tier boundary (cuda/matmul/matmul_launch.cu): K == 0; M <= 8 with N % 8 == 0
(SkinnyM); K and N multiples of 8 (tensor cores) or 4 (float32 register-blocked SIMT) or neither (16-bit:
MmaStaged, tensor cores with misaligned rows staged through registers; float32: SIMT tiled fallback); tiles 64 and 128 with tails; batch counts and M-tile counts past the 65535 grid limit.
Errors are compared to a tolerance that grows like sqrt(K) (output magnitude of random normal inputs);
float32 at DEFAULT/HIGH precision on a GPU is TF32 (relative error ~1e-3), as in XLA.
"""
from __future__ import annotations


import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, strategies as st
from jax import lax
from math import erf

import jax_kernels as jk
from conftest import FLOAT_DTYPES, ON_GPU, custom_call_targets, randn

EXACT = lax.Precision.HIGHEST


def _uses_tf32(dtype, precision) -> bool:
    p = None if precision is None else lax.Precision(precision) if isinstance(precision, str) else precision
    return ON_GPU and np.dtype(dtype) == np.float32 and p != lax.Precision.HIGHEST


def assert_matmul_close(out, ref, dtype, k, precision=EXACT):
    """|out - ref| <= atol * sqrt(K) + rtol * |ref| with per-dtype (rtol, atol)."""
    if np.dtype(dtype) == np.float32:
        r, a = (5e-3, 5e-3) if _uses_tf32(dtype, precision) else (1e-5, 1e-5)
    elif np.dtype(dtype) == np.dtype(jnp.bfloat16):
        r, a = 1.6e-2, 1.6e-2
    else:
        r, a = 2e-3, 2e-3
    out = np.asarray(jnp.asarray(out, jnp.float32), np.float64)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    np.testing.assert_allclose(out, ref, rtol=r, atol=a * np.sqrt(max(k, 1)))


def _act64(name, y):
    if name is None:
        return y
    if name == "relu":
        return np.maximum(y, 0)
    if name == "gelu":
        return 0.5 * y * (1 + np.vectorize(erf)(y / np.sqrt(2)))
    if name == "gelu_tanh":
        return 0.5 * y * (1 + np.tanh(np.sqrt(2 / np.pi) * (y + 0.044715 * y ** 3)))
    if name == "silu":
        return y / (1 + np.exp(-y))
    raise AssertionError(name)


# Residual shapes for a (m, n) linear output, by name; None: no residual.
RES_SHAPES = {"full": lambda m, n: (m, n), "row": lambda m, n: (n,), "col": lambda m, n: (m, 1),
              "scalar": lambda m, n: (), None: None}


def linear_case(rng, m, k, n, dtype, with_bias, res_shape):
    """Operands of linear (x, w, bias, residual) and the float64 reference of act(x @ w + bias) + residual
    as a function of the activation's name."""
    x, x64 = randn(rng, (m, k), dtype)
    w, w64 = randn(rng, (k, n), dtype, scale=1 / np.sqrt(k))
    bias, b64 = randn(rng, (n,), dtype) if with_bias else (None, 0.0)
    shape = RES_SHAPES[res_shape]
    res, r64 = randn(rng, shape(m, n), dtype) if shape else (None, 0.0)
    return (x, w, bias, res), lambda activation: _act64(activation, x64 @ w64 + b64) + r64


# ---- matmul: shapes x dtypes ------------------------------------------------------------------------

SHAPES = [  # (M, K, N)
    (1, 1, 1), (3, 5, 7), (1, 64, 8), (8, 129, 40), (8, 7, 40), (9, 64, 64), (33, 17, 65),
    (64, 64, 64), (65, 32, 72), (127, 128, 129), (129, 40, 33), (100, 1025, 24), (3, 1024, 4096),
    (257, 96, 136),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("mkn", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_shapes(rng, dtype, mkn):
    m, k, n = mkn
    a, a64 = randn(rng, (m, k), dtype)
    b, b64 = randn(rng, (k, n), dtype)
    out = jax.jit(lambda a, b: jk.matmul(a, b, precision=EXACT))(a, b)
    assert out.dtype == dtype
    assert_matmul_close(out, a64 @ b64, dtype, k)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("precision", [None, "default", lax.Precision.HIGH, "tensorfloat32", "highest",
                                       lax.Precision.HIGHEST, ("highest", "highest")])
def test_matmul_precisions(rng, dtype, precision):
    a, a64 = randn(rng, (72, 136), dtype)
    b, b64 = randn(rng, (136, 40), dtype)
    out = jk.matmul(a, b, precision=precision)
    p = precision[0] if isinstance(precision, tuple) else precision
    assert_matmul_close(out, a64 @ b64, dtype, 136, p)


def test_matmul_large_tiles_float32(rng):
    # Enough 128x128 tiles for the large register-blocked tile, with tails on every side.
    a, a64 = randn(rng, (2100, 36), jnp.float32)
    b, b64 = randn(rng, (36, 2060), jnp.float32)
    assert_matmul_close(jk.matmul(a, b, precision=EXACT), a64 @ b64, jnp.float32, 36)


# Exact float32: SimtRegisterBlocked's tile sizes (32x64, 64x64, 128x128, chosen by tile counts) with many k-tiles
# (more than the cp.async ring's stages), a K tail inside the last k-tile, M/N tails; and SimtRing (16x32 tiles of 64
# threads, or 32x32 of 128, 32-deep k-tiles through a 4-stage ring, 16-deep through an 8-stage one for K <= 128; the
# default where 64x64 tiles fill at most a quarter of the SMs and K <= 2048): the tile edges (M % 16, M % 32,
# N % 32), both rings (K = 4, 12, 100 and K >= 260), fewer k-tiles than the ring has stages (K = 4, 12) and many more
# (K = 1028). Default dispatch and, on a GPU, JK_MATMUL_SIMT=cpasync (the double-buffered
# kernels' cp.async ring), noswizzle, ring16 / ring32 (forced at every size) and noring. The small shapes also run
# batched, with b broadcast over the batch.
SIMT_SHAPES = [(130, 1028, 132), (1000, 100, 1100), (2100, 1028, 2060), (512, 256, 512), (1, 4, 4), (33, 12, 68),
               (31, 508, 132), (97, 1028, 36), (70, 260, 8), (64, 100, 1100)]  # (M, K, N)


@pytest.mark.parametrize("variant", ["default"] + (["cpasync", "noswizzle", "ring16", "ring32", "noring"]
                                                   if ON_GPU else []))
@pytest.mark.parametrize("mkn", SIMT_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_float32_simt(rng, monkeypatch, mkn, variant):
    if variant != "default":
        monkeypatch.setenv("JK_MATMUL_SIMT", variant)
    m, k, n = mkn
    a, a64 = randn(rng, (m, k), jnp.float32)
    b, b64 = randn(rng, (k, n), jnp.float32)
    assert_matmul_close(jax.jit(lambda x, y: jk.matmul(x, y, precision=EXACT))(a, b), a64 @ b64, jnp.float32, k)
    if m * k * n <= 1 << 26:
        a, a64 = randn(rng, (3, m, k), jnp.float32)  # batched, then b broadcast over the batch
        b, b64 = randn(rng, (3, k, n), jnp.float32)
        assert_matmul_close(jk.matmul(a, b, precision=EXACT), np.matmul(a64, b64), jnp.float32, k)
        assert_matmul_close(jk.matmul(a, b[0], precision=EXACT), np.matmul(a64, b64[0]), jnp.float32, k)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_matmul_large_tiles_tensor_core(rng, dtype):
    a, a64 = randn(rng, (520, 264), dtype)
    b, b64 = randn(rng, (264, 392), dtype)
    assert_matmul_close(jk.matmul(a, b), a64 @ b64, dtype, 264, None)


# The Hopper tier (sm_90: TMA + wgmma, 128x128 or 128x256 tiles, 64-deep k-tiles, persistent grid; K and N
# multiples of 8): tails on every side of both tile widths, k-tile tails, more tiles than SMs, batches of
# distinct and of broadcast matrices, every epilogue operand. Elsewhere these run the mma.sync tier.
@pytest.fixture
def wgmma(monkeypatch):
    """The Hopper tier on, whatever its built-in default (the launcher reads JK_MATMUL_WGMMA at every launch)."""
    monkeypatch.setenv("JK_MATMUL_WGMMA", "1")


WGMMA_SHAPES = [  # (M, K, N)
    (9, 8, 8), (127, 72, 136), (129, 200, 264), (300, 64, 520), (130, 1032, 776), (257, 8, 392)]


# Variants of the tier for plain matmuls: the default (TMA-store epilogue), the fused epilogue
# (JK_MATMUL_WGMMA_EPI=row8), the ping-pong schedule (JK_MATMUL_WGMMA_SCHED=pingpong), split-K over a
# cluster of 2 (JK_MATMUL_WGMMA_SPLITK=2), and 128x64 / 128x256 tiles forced (JK_MATMUL_WGMMA=64 / 256; 64 also
# in multicast pairs and with split-K). Elsewhere than on an sm_90 GPU they all run the same code, so only the default runs there.
WGMMA_VARIANTS = ["default"] + (["row8", "pingpong", "splitk", "w64", "w64_mc1", "w64_mcb", "w64_splitk", "w256",
                                  "w256_mca", "w256_mcb", "swap"] if ON_GPU else [])
WGMMA_WIDTHS = {"w64": "64", "w64_mc1": "64", "w64_mcb": "64", "w64_splitk": "64", "w256": "256", "w256_mca": "256",
                "w256_mcb": "256"}


def set_wgmma_variant(monkeypatch, variant):
    # Multicast pairs: sharing a (JK_MATMUL_WGMMA_MC=1; by default 128x64 tiles where K % 16 == 8, e.g. K = 8 or
    # 200 above), sharing b (JK_MATMUL_WGMMA_MCB=1; by default 128x256 tiles where N % 16 == 8, e.g.
    # test_matmul_wgmma_more_tiles_than_sms's N = 2056); the plain width variants run the tiles alone (=0).
    if variant in WGMMA_WIDTHS:
        monkeypatch.setenv("JK_MATMUL_WGMMA_MC", "1" if variant in ("w64_mc1", "w256_mca") else "0")
        monkeypatch.setenv("JK_MATMUL_WGMMA_MCB", "1" if variant in ("w64_mcb", "w256_mcb") else "0")
        monkeypatch.setenv("JK_MATMUL_WGMMA", WGMMA_WIDTHS[variant])
        variant = "splitk" if variant.endswith("_splitk") else ""
    # The swapped-role kernel (144 x 64 tiles in clusters of 4, JK_MATMUL_WGMMA_SWAP=1) for every plain matmul; the
    # other forced variants turn it off (by default it takes one-wave problems with K >= 512 and K or N % 16 == 8,
    # such as (130, 1032, 776) above, where the default variant runs it).
    if variant != "default":
        monkeypatch.setenv("JK_MATMUL_WGMMA_SWAP", "1" if variant == "swap" else "0")
    if variant == "row8":
        monkeypatch.setenv("JK_MATMUL_WGMMA_EPI", "row8")
    if variant == "pingpong":
        monkeypatch.setenv("JK_MATMUL_WGMMA_SCHED", "pingpong")
    if variant == "splitk":  # every tile's k-tiles split over a cluster of 2 CTAs, whatever the tile count
        monkeypatch.setenv("JK_MATMUL_WGMMA_SPLITK", "2")


@pytest.mark.parametrize("variant", WGMMA_VARIANTS)
@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
@pytest.mark.parametrize("mkn", WGMMA_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_wgmma_tiles(rng, wgmma, monkeypatch, dtype, mkn, variant):
    set_wgmma_variant(monkeypatch, variant)
    m, k, n = mkn
    a, a64 = randn(rng, (m, k), dtype)
    b, b64 = randn(rng, (k, n), dtype)
    out = jax.jit(jk.matmul)(a, b)
    assert_matmul_close(out, a64 @ b64, dtype, k, None)


# The swapped-role kernel on its own geometry: 1000^3 is 7 x 4 cluster tiles of 144 x 256 (28 clusters of 4, 112 CTAs;
# the last cluster's rows and columns cut), 1000x1008x1000 K sector-aligned, 145 rows two M-tiles (the second has 1
# row), 2 x 300 x 520 a batch with a cluster's last 3 CTAs wholly past N; f16 too.
@pytest.mark.skipif(not ON_GPU, reason="the swapped-role kernel is GPU only; the CPU runs the same reference")
@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
@pytest.mark.parametrize("shapes", [((1000, 1000), (1000, 1000)), ((1000, 1008), (1008, 1000)),
                                    ((145, 72), (72, 1000)), ((2, 300, 520), (2, 520, 8))], ids=str)
def test_matmul_wgmma_swap(rng, wgmma, monkeypatch, dtype, shapes):
    monkeypatch.setenv("JK_MATMUL_WGMMA_SWAP", "1")
    a, a64 = randn(rng, shapes[0], dtype)
    b, b64 = randn(rng, shapes[1], dtype)
    assert_matmul_close(jk.matmul(a, b), np.matmul(a64, b64), dtype, shapes[0][-1], None)


# 768^3: 36 tiles of 128x128 and K >= 768, which by default runs the Hopper tier with split-K over a
# cluster of 2 (no environment variable set); plain (TMA-store epilogue) and fused with a residual.
def test_matmul_wgmma_splitk_default(rng):
    a, a64 = randn(rng, (768, 768), jnp.bfloat16)
    b, b64 = randn(rng, (768, 768), jnp.bfloat16, scale=1 / np.sqrt(768))
    assert_matmul_close(jk.matmul(a, b), a64 @ b64, jnp.bfloat16, 768, None)
    bias, bias64 = randn(rng, (768,), jnp.bfloat16)
    res, res64 = randn(rng, (768, 768), jnp.bfloat16)
    out = jk.linear(a, b, bias, activation="gelu", residual=res)
    assert_matmul_close(out, _act64("gelu", a64 @ b64 + bias64) + res64, jnp.bfloat16, 1, None)


@pytest.mark.parametrize("variant", WGMMA_VARIANTS)
@pytest.mark.parametrize("k", [264] + ([1032] if ON_GPU else []))
def test_matmul_wgmma_more_tiles_than_sms(rng, wgmma, monkeypatch, k, variant):
    # 17 x 9 tiles of 128x256, 17 x 17 of 128x128 (past 132 SMs: CTAs take more tiles while the producer
    # runs ahead; ping-pong alternates them between warpgroups). K = 1032: more k-tiles than ring stages,
    # so a warpgroup stepping over the other's tile lands phases ahead in the ring.
    set_wgmma_variant(monkeypatch, variant)
    a, a64 = randn(rng, (2176, k), jnp.bfloat16)
    b, b64 = randn(rng, (k, 2056), jnp.bfloat16)
    assert_matmul_close(jk.matmul(a, b), a64 @ b64, jnp.bfloat16, k, None)


@pytest.mark.parametrize("shapes", [
    ((3, 130, 72), (3, 72, 136)), ((2, 1, 130, 64), (1, 3, 64, 264)), ((12, 260, 64), (12, 64, 520)),
    ((4, 100, 40), (40, 48)), ((5, 72), (2, 72, 136)),
], ids=str)
@pytest.mark.parametrize("variant", WGMMA_VARIANTS)
@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
def test_matmul_wgmma_batched(rng, wgmma, monkeypatch, dtype, shapes, variant):
    set_wgmma_variant(monkeypatch, variant)
    a, a64 = randn(rng, shapes[0], dtype)
    b, b64 = randn(rng, shapes[1], dtype)
    assert_matmul_close(jk.matmul(a, b), np.matmul(a64, b64), dtype, shapes[0][-1], None)


# The fused epilogue loads the next chunk's bias and residual ahead and prefetches residual tiles into L2
# (both by default); JK_MATMUL_WGMMA_PREFETCH=0 loads them where they are used. A residual broadcast along
# columns ("col", (M, 1)) takes the gathered loads. "splitk": the fused epilogue after the split-K exchange.
@pytest.mark.parametrize("prefetch", ["default"] + (["0", "splitk", "mcb"] if ON_GPU else []))
@pytest.mark.parametrize("activation", [None, "relu", "gelu", "gelu_tanh", "silu"])
@pytest.mark.parametrize("res_shape", ["full", "row", "col", None], ids=str)
def test_linear_wgmma_epilogue(rng, wgmma, monkeypatch, activation, res_shape, prefetch):
    if prefetch == "splitk":
        monkeypatch.setenv("JK_MATMUL_WGMMA_SPLITK", "2")
    elif prefetch == "mcb":  # 128x256 tiles in multicast pairs sharing b (boxed epilogue where the layout allows)
        monkeypatch.setenv("JK_MATMUL_WGMMA", "256")
        monkeypatch.setenv("JK_MATMUL_WGMMA_MCB", "1")
    elif prefetch != "default":
        monkeypatch.setenv("JK_MATMUL_WGMMA_PREFETCH", prefetch)
    m, k, n = 260, 136, 392
    x, x64 = randn(rng, (2, m, k), jnp.bfloat16)
    w, w64 = randn(rng, (k, n), jnp.bfloat16, scale=1 / np.sqrt(k))
    bias, b64 = randn(rng, (n,), jnp.bfloat16)
    res, r64 = {"full": lambda: randn(rng, (2, m, n), jnp.bfloat16), "row": lambda: randn(rng, (n,), jnp.bfloat16),
           "col": lambda: randn(rng, (2, m, 1), jnp.bfloat16), None: lambda: (None, 0.0)}[res_shape]()
    out = jax.jit(lambda *a: jk.linear(*a, activation=activation, residual=res))(x, w, bias)
    assert_matmul_close(out, _act64(activation, x64 @ w64 + b64) + r64, jnp.bfloat16, 1, None)


def test_matmul_wgmma_k_tail_reads_no_neighbour(rng, wgmma):
    # Batch 0's k-tail must read zeros, not batch 1's first rows of b (an inf there would poison it).
    a, a64 = randn(rng, (2, 130, 72), jnp.bfloat16)
    b, b64 = randn(rng, (2, 72, 136), jnp.bfloat16)
    b = b.at[1, :8].set(jnp.inf)
    b64 = np.asarray(b.astype(jnp.float32), np.float64)
    out = np.asarray(jk.matmul(a, b).astype(jnp.float32), np.float64)
    assert np.isfinite(out[0]).all()
    assert_matmul_close(out[0], a64[0] @ b64[0], jnp.bfloat16, 72, None)


# MmaStaged (bf16/f16, M > 8, rows that are not 16-byte aligned: N % 8 != 0, K % 8 != 0 or an odd-offset
# slice): the misaligned operand goes through registers (two aligned 16-byte loads per 8 elements, shifted,
# masked past the row's end) into the mma.sync tier's ring; the epilogue stores elements. Shapes: N = 1, 7,
# 9, 129, 1031 (tails inside and across 64/128/256-column tiles), K tails inside a 32-deep k-tile and past the
# ring, M tails, each tile size (64x64, 128x128 past 132 tiles of it, 128x256 past 132 tiles of it), b-only
# and a-and-b staging. By default on a GPU the lowering pads K and N to 16-byte rows for M > 8 (XLA pads
# around the aligned kernels, the output sliced back); "nopad" (JK_MATMUL_PAD=0) keeps the unaligned kernels,
# also under "simt" (JK_MATMUL_UNALIGNED=simt: SimtTiled, the tier these shapes had before) and "mma" (the
# staged tier for M <= 8 too). Elsewhere all variants run the same CPU code.
UNALIGNED_VARIANTS = ["default"] + (["nopad", "simt", "mma"] if ON_GPU else [])
UNALIGNED_SHAPES = [  # (M, K, N)
    (9, 768, 1), (9, 64, 7), (1, 40, 9), (5, 13, 65), (257, 64, 9), (257, 72, 129), (129, 136, 1031),
    (33, 7, 64), (65, 9, 136), (257, 1001, 264), (130, 1000, 1001), (300, 129, 255)] + (
    [(1500, 40, 1537), (2100, 72, 2049)] if ON_GPU else [])  # the 128x128 and 128x256 tiles: CUDA only


@pytest.fixture
def unaligned_variant(monkeypatch, request):
    if request.param != "default":
        monkeypatch.setenv("JK_MATMUL_PAD", "0")  # read when the op is traced: each test jits afresh
    if request.param in ("simt", "mma"):
        monkeypatch.setenv("JK_MATMUL_UNALIGNED", request.param)
    return request.param


@pytest.mark.parametrize("unaligned_variant", UNALIGNED_VARIANTS, indirect=True)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("mkn", UNALIGNED_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_unaligned_rows(rng, unaligned_variant, dtype, mkn):
    m, k, n = mkn
    a, a64 = randn(rng, (m, k), dtype)
    b, b64 = randn(rng, (k, n), dtype, scale=1 / np.sqrt(k))
    out = jax.jit(lambda a, b: jk.matmul(a, b, precision=EXACT))(a, b)
    assert out.dtype == dtype
    assert_matmul_close(out, a64 @ b64, dtype, 1)


@pytest.mark.parametrize("unaligned_variant", UNALIGNED_VARIANTS, indirect=True)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES if ON_GPU else [jnp.bfloat16, jnp.float16])
@pytest.mark.parametrize("activation", [None, "relu", "gelu", "gelu_tanh", "silu"])
@pytest.mark.parametrize("res_shape", ["full", "row", "col", None], ids=str)
@pytest.mark.parametrize("mkn", [(257, 72, 129), (130, 33, 1031)], ids=str)
def test_linear_unaligned_epilogue(rng, unaligned_variant, dtype, activation, res_shape, mkn):
    m, k, n = mkn
    x, x64 = randn(rng, (m, k), dtype)
    w, w64 = randn(rng, (k, n), dtype, scale=1 / np.sqrt(k))
    bias, bias64 = randn(rng, (n,), dtype)
    res, r64 = {"full": lambda: randn(rng, (m, n), dtype), "row": lambda: randn(rng, (n,), dtype),
                "col": lambda: randn(rng, (m, 1), dtype), None: lambda: (None, 0.0)}[res_shape]()
    out = jax.jit(lambda *a: jk.linear(*a, activation=activation, residual=res, precision=EXACT))(x, w, bias)
    assert_matmul_close(out, _act64(activation, x64 @ w64 + bias64) + r64, dtype, 1)


@pytest.mark.parametrize("unaligned_variant", UNALIGNED_VARIANTS, indirect=True)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("offsets", [(1, 0), (0, 1), (3, 5)], ids=str)
def test_matmul_unaligned_slices_in_jit(rng, unaligned_variant, dtype, offsets):
    # K and N multiples of 8 but odd-offset bases (when XLA passes the slice without a copy).
    m, k, n = 130, 72, 136
    oa, ob = offsets
    a, a64 = randn(rng, (oa + m * k,), dtype)
    b, b64 = randn(rng, (ob + k * n,), dtype, scale=1 / np.sqrt(k))

    @jax.jit
    def f(a, b):
        return jk.matmul(a[oa:].reshape(m, k), b[ob:].reshape(k, n), precision=EXACT)

    assert_matmul_close(f(a, b), a64[oa:].reshape(m, k) @ b64[ob:].reshape(k, n), dtype, 1)


@pytest.mark.parametrize("unaligned_variant", UNALIGNED_VARIANTS, indirect=True)
@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
@pytest.mark.parametrize("shapes", [((3, 130, 72), (3, 72, 129)), ((2, 65, 33), (33, 1031)),
                                    ((2, 1, 70, 9), (1, 3, 9, 257))], ids=str)
def test_matmul_unaligned_batched(rng, unaligned_variant, dtype, shapes):
    a, a64 = randn(rng, shapes[0], dtype)
    b, b64 = randn(rng, shapes[1], dtype, scale=1 / np.sqrt(shapes[1][-2]))
    assert_matmul_close(jk.matmul(a, b), np.matmul(a64, b64), dtype, 1, None)


@pytest.mark.parametrize("unaligned_variant", UNALIGNED_VARIANTS, indirect=True)
def test_matmul_unaligned_tails_read_no_neighbour(rng, unaligned_variant):
    # The aligned 16-byte blocks past a row's last element hold the next row / batch matrix: an inf there must
    # not reach the result (k tails of a and b are masked to zero, not just multiplied by zero).
    a, _ = randn(rng, (2, 130, 33), jnp.bfloat16)
    b, _ = randn(rng, (2, 33, 129), jnp.bfloat16, scale=1 / np.sqrt(33))
    a = a.at[1].set(jnp.inf)
    b = b.at[1].set(jnp.inf)
    a64 = np.asarray(a.astype(jnp.float32), np.float64)
    b64 = np.asarray(b.astype(jnp.float32), np.float64)
    out = np.asarray(jk.matmul(a, b).astype(jnp.float32), np.float64)
    assert np.isfinite(out[0]).all()
    assert_matmul_close(out[0], a64[0] @ b64[0], jnp.bfloat16, 1, None)


# The decode tier for 16-bit inputs (SkinnyMma, M <= 8: mma.sync on out^T = b^T a^T, K split over the
# warps of a CTA and over a thread-block cluster on sm_90): M across the threshold, N tails inside a 64-column
# block, K tails inside a 16-deep step and past a warp's slice, K % 4 != 0 (scalar loads of a), several
# cluster ranks, batches of distinct b. By default the tier takes bf16 4 <= M <= 8 (f16 5 <= M <= 8);
# JK_MATMUL_SKINNY=mma gives it every M <= 8, =stream its cp.async-ring twin SkinnyStream every M <= 8
# (K % 4 == 0; SkinnyMma otherwise), =simt none (the SIMT SkinnyM tier then runs them).
SKINNY_SHAPES = [  # (M, K, N)
    (1, 4096, 64), (2, 16, 8), (4, 520, 264), (5, 64, 16), (7, 1030, 72), (8, 37, 4104), (8, 2056, 136),
    (8, 3000, 4096), (9, 264, 72), (16, 64, 8)]
SKINNY_VARIANTS = ["default"] + (["mma", "stream", "simt"] if ON_GPU else [])


@pytest.fixture
def skinny_variant(monkeypatch, request):
    if request.param != "default":
        monkeypatch.setenv("JK_MATMUL_SKINNY", request.param)
    return request.param


@pytest.mark.parametrize("skinny_variant", SKINNY_VARIANTS, indirect=True)
@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
@pytest.mark.parametrize("mkn", SKINNY_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_skinny(rng, skinny_variant, dtype, mkn):
    m, k, n = mkn
    a, a64 = randn(rng, (m, k), dtype)
    b, b64 = randn(rng, (k, n), dtype)
    assert_matmul_close(jax.jit(jk.matmul)(a, b), a64 @ b64, dtype, k, None)


@pytest.mark.parametrize("skinny_variant", SKINNY_VARIANTS, indirect=True)
@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
def test_matmul_skinny_batched(rng, skinny_variant, dtype):
    a, a64 = randn(rng, (3, 4, 520), dtype)
    b, b64 = randn(rng, (3, 520, 200), dtype)
    assert_matmul_close(jk.matmul(a, b), np.matmul(a64, b64), dtype, 520, None)
    a, a64 = randn(rng, (2, 1, 8, 1024), dtype)  # b batched, a broadcast over b's batch
    b, b64 = randn(rng, (1, 3, 1024, 136), dtype)
    assert_matmul_close(jk.matmul(a, b), np.matmul(a64, b64), dtype, 1024, None)


@pytest.mark.parametrize("skinny_variant", SKINNY_VARIANTS, indirect=True)
@pytest.mark.parametrize("activation", [None, "relu", "gelu", "gelu_tanh", "silu"])
def test_linear_skinny_epilogue(rng, skinny_variant, activation):
    m, k, n = 8, 2048, 264
    x, x64 = randn(rng, (m, k), jnp.bfloat16)
    w, w64 = randn(rng, (k, n), jnp.bfloat16, scale=1 / np.sqrt(k))
    bias, b64 = randn(rng, (n,), jnp.bfloat16)
    res, r64 = randn(rng, (m, n), jnp.bfloat16)
    out = jax.jit(lambda *a: jk.linear(*a, activation=activation, residual=res))(x, w, bias)
    assert_matmul_close(out, _act64(activation, x64 @ w64 + b64) + r64, jnp.bfloat16, 1, None)


@pytest.mark.parametrize("shapes", [
    ((2, 1, 5, 8), (3, 8, 16)), ((5, 7), (2, 3, 7, 4)), ((4, 1, 3, 5, 7), (1, 6, 1, 7, 9)),
    ((3, 1, 9, 16), (1, 4, 16, 24)), ((6, 5, 8), (8, 16)), ((1, 1, 4, 8), (1, 8, 8)),
], ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_matmul_batched_broadcast(rng, dtype, shapes):
    a, a64 = randn(rng, shapes[0], dtype)
    b, b64 = randn(rng, shapes[1], dtype)
    out = jk.matmul(a, b, precision=EXACT)
    assert_matmul_close(out, np.matmul(a64, b64), dtype, shapes[0][-1])


@pytest.mark.parametrize("shapes", [
    ((8,), (8, 5)), ((5, 8), (8,)), ((8,), (8,)), ((8,), (3, 8, 5)), ((3, 4, 8), (8,)), ((1,), (1, 1)),
], ids=str)
def test_matmul_vectors(rng, shapes):
    a, a64 = randn(rng, shapes[0], jnp.float32)
    b, b64 = randn(rng, shapes[1], jnp.float32)
    out = jk.matmul(a, b, precision=EXACT)
    assert_matmul_close(out, np.matmul(a64, b64), jnp.float32, shapes[0][-1])


@pytest.mark.parametrize("shapes", [
    ((3, 0), (0, 4)), ((0, 5), (5, 4)), ((3, 5), (5, 0)), ((0, 3, 5), (5, 4)), ((2, 3, 0), (2, 0, 6)),
], ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_matmul_empty(rng, dtype, shapes):
    a = jnp.ones(shapes[0], dtype)
    b = jnp.ones(shapes[1], dtype)
    out = jk.matmul(a, b)
    expected = np.matmul(np.ones(shapes[0]), np.ones(shapes[1]))
    assert out.shape == expected.shape and out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out, np.float64), expected)


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
@pytest.mark.parametrize("k", [64, 72, 136])
def test_matmul_attention_scores_short_k(rng, dtype, k):
    """Attention-score shapes, batched (batch, heads) x (T x Dh) @ (Dh x T) with a short K: since session 21 the
    default dispatch takes the wgmma tier from K = 64 on Hopper (120 tiles of 128x128 here); K = 72 and 136 leave a
    partial k-tile."""
    a, a64 = randn(rng, (2, 3, 512, k), dtype)
    b, b64 = randn(rng, (2, 3, k, 520), dtype)
    assert_matmul_close(jax.jit(jk.matmul)(a, b), np.matmul(a64, b64), dtype, k, None)


def test_matmul_many_batches(rng):
    # Batch count and M-tile count past the 65535 grid limit: the kernels loop over the rest.
    a, a64 = randn(rng, (70000, 2, 3), jnp.float32)
    b, b64 = randn(rng, (70000, 3, 2), jnp.float32)
    assert_matmul_close(jk.matmul(a, b, precision=EXACT), np.matmul(a64, b64), jnp.float32, 3)
    a, a64 = randn(rng, (64 * 65536 + 100, 3), jnp.float32)
    b, b64 = randn(rng, (3, 2), jnp.float32)
    assert_matmul_close(jk.matmul(a, b, precision=EXACT), a64 @ b64, jnp.float32, 3)


def test_matmul_nan_poisons_only_its_row(rng):
    a, a64 = randn(rng, (16, 32), jnp.float32)
    b, b64 = randn(rng, (32, 24), jnp.float32)
    a = a.at[5, 3].set(jnp.nan)
    out = np.asarray(jk.matmul(a, b, precision=EXACT))
    assert np.isnan(out[5]).all()
    assert np.isfinite(np.delete(out, 5, axis=0)).all()


def test_matmul_inputs_unchanged_and_misaligned_slices(rng):
    a, a64 = randn(rng, (1 + 33 * 20,), jnp.float32)
    b, b64 = randn(rng, (20 * 12,), jnp.float32)
    a_before = np.asarray(a).copy()

    @jax.jit
    def f(a, b):  # odd-offset slices: the kernels must not assume 16-byte alignment
        return jk.matmul(a[1:].reshape(33, 20), b.reshape(20, 12), precision=EXACT)

    out = f(a, b)
    assert_matmul_close(out, a64[1:].reshape(33, 20) @ b64.reshape(20, 12), jnp.float32, 20)
    np.testing.assert_array_equal(np.asarray(a), a_before)


def test_default_matmul_precision_context(rng):
    a, a64 = randn(rng, (40, 64), jnp.float32)
    b, b64 = randn(rng, (64, 24), jnp.float32)
    with jax.default_matmul_precision("float32"):
        out = jax.jit(jk.matmul)(a, b)
    assert_matmul_close(out, a64 @ b64, jnp.float32, 64, EXACT)


# ---- linear: epilogue -------------------------------------------------------------------------------

ACTIVATIONS = [None, "relu", "gelu", "gelu_tanh", "silu"]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("with_bias, with_res", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("mkn", [(5, 24, 16), (70, 136, 72), (33, 17, 65)], ids=str)  # skinny, mma, tiled
def test_linear_epilogue(rng, dtype, activation, with_bias, with_res, mkn):
    m, k, n = mkn
    x, x64 = randn(rng, (m, k), dtype)
    w, w64 = randn(rng, (k, n), dtype, scale=1 / np.sqrt(k))
    bias, b64 = randn(rng, (n,), dtype) if with_bias else (None, 0.0)
    res, r64 = randn(rng, (m, n), dtype) if with_res else (None, 0.0)
    out = jax.jit(lambda *a: jk.linear(*a, activation=activation, residual=res, precision=EXACT))(x, w, bias)
    assert out.dtype == dtype
    ref = _act64(activation, x64 @ w64 + b64) + r64
    assert_matmul_close(out, ref, dtype, 1)


# Every tier the default dispatch picks, with the whole epilogue, at each dtype's default precision (float32:
# TF32 on a GPU). Session 4's TF32 wgmma tier dropped bias, activation and residual, and nothing caught it:
# every float32 linear test above ran at HIGHEST. Shapes by the tier they reach on an H100/H200: M <= 8
# (SkinnyMma / SkinnyM), M = 16 (SkinnyPipe), mid-size (mma.sync), >= 768^3 (wgmma, WgmmaTf32), odd N
# (MmaStaged / SimtTiled), tiny odd (SimtTiled).
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("mkn", [(4, 512, 1024), (16, 512, 1024), (300, 136, 392), (1024, 768, 1040),
                                 (257, 100, 263), (33, 17, 65)], ids=str)
def test_linear_every_tier_default_precision(rng, dtype, mkn):
    (x, w, bias, res), ref = linear_case(rng, *mkn, dtype, True, "full")
    out = jax.jit(lambda *a: jk.linear(*a, activation="gelu", residual=res))(x, w, bias)
    assert out.dtype == dtype
    assert_matmul_close(out, ref("gelu"), dtype, 1, None)


@pytest.mark.parametrize("res_shape", [(7, 9), (9,), (7, 1), (), (1, 1), (4, 7, 9), (4, 1, 9), (1, 7, 1)],
                         ids=str)
def test_linear_residual_broadcast(rng, res_shape):
    x, x64 = randn(rng, (4, 7, 12), jnp.float32)
    w, w64 = randn(rng, (12, 9), jnp.float32)
    bias, b64 = randn(rng, (9,), jnp.float32)
    res, r64 = randn(rng, res_shape, jnp.float32)
    out = jk.linear(x, w, bias, activation="silu", residual=res, precision=EXACT)
    assert_matmul_close(out, _act64("silu", x64 @ w64 + b64) + r64, jnp.float32, 12)


def test_linear_vector_and_batched_w(rng):
    x, x64 = randn(rng, (12,), jnp.float32)
    w, w64 = randn(rng, (3, 12, 9), jnp.float32)
    bias, b64 = randn(rng, (9,), jnp.float32)
    res, r64 = randn(rng, (3, 9), jnp.float32)
    out = jk.linear(x, w, bias, activation="relu", residual=res, precision=EXACT)
    assert_matmul_close(out, np.maximum(x64 @ w64 + b64, 0) + r64, jnp.float32, 12)


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_linear_empty_contraction(activation):
    x = jnp.ones((3, 0), jnp.float32)
    w = jnp.ones((0, 4), jnp.float32)
    bias = jnp.asarray([-1.0, 0.5, 2.0, 0.0], jnp.float32)
    res = jnp.full((3, 4), 0.25, jnp.float32)
    out = jk.linear(x, w, bias, activation=activation, residual=res)
    ref = _act64(activation, np.broadcast_to(np.asarray(bias, np.float64), (3, 4))) + 0.25
    np.testing.assert_allclose(np.asarray(out, np.float64), ref, rtol=1e-6, atol=1e-6)


# ---- vmap: one custom call, any axis of any argument ------------------------------------------------

def _single_call(fn, *args):
    targets, text = custom_call_targets(fn, *args)
    assert len(targets) == 1, targets
    assert "dot_general" not in text and "stablehlo.while" not in text
    return targets[0]


@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0), (1, None), (2, None), (None, 1), (None, 2),
                                  (1, 2), (2, 0)], ids=str)
def test_matmul_vmap(rng, axes):
    a, a64 = randn(rng, (6, 10, 12), jnp.float32)   # batched on axis 0 of (5, 10, 12)-like views
    b, b64 = randn(rng, (12, 8, 7), jnp.float32)
    a_in = {None: a64[0], 0: a64, 1: np.moveaxis(a64, 0, 1), 2: np.moveaxis(a64, 0, 2)}[axes[0]]
    b_in = {None: b64[..., 0], 0: np.moveaxis(b64, 2, 0), 1: np.moveaxis(b64, 2, 1), 2: b64}[axes[1]]
    if axes[1] == 0:
        b_in = np.moveaxis(b64, 2, 0)
    size = 6 if axes[0] is not None else 7
    if axes[0] is not None and axes[1] is not None:
        b_in = {0: np.moveaxis(b64[..., :1].repeat(6, -1), 2, 0), 1: np.moveaxis(b64[..., :1].repeat(6, -1), 2, 1),
                2: b64[..., :1].repeat(6, -1)}[axes[1]]
    del size
    f = jax.vmap(lambda x, y: jk.matmul(x, y, precision=EXACT), in_axes=axes)
    out = f(jnp.asarray(a_in, jnp.float32), jnp.asarray(b_in, jnp.float32))
    a_std = np.moveaxis(a_in, axes[0], 0) if axes[0] is not None else a_in
    b_std = np.moveaxis(b_in, axes[1], 0) if axes[1] is not None else b_in
    ref = np.matmul(a_std, b_std)
    assert_matmul_close(out, ref, jnp.float32, 12)
    assert _single_call(f, jnp.asarray(a_in, jnp.float32), jnp.asarray(b_in, jnp.float32)) == "jk_matmul"


def test_matmul_vmap_batched_operands(rng):
    a, a64 = randn(rng, (4, 3, 5, 8), jnp.float32)
    b, b64 = randn(rng, (3, 8, 6), jnp.float32)
    f = jax.vmap(lambda x, y: jk.matmul(x, y, precision=EXACT), in_axes=(0, None))
    assert_matmul_close(f(a, b), np.matmul(a64, b64), jnp.float32, 8)
    f2 = jax.vmap(jax.vmap(lambda x, y: jk.matmul(x, y, precision=EXACT), in_axes=(1, 0)), in_axes=(0, None))
    a2, a264 = randn(rng, (4, 5, 3, 8), jnp.float32)
    ref = np.matmul(np.moveaxis(a264, 2, 1), b64)
    assert_matmul_close(f2(a2, b), ref, jnp.float32, 8)
    assert _single_call(f2, a2, b) == "jk_matmul"


@pytest.mark.parametrize("mapped", ["x", "w", "bias", "residual", "all", "x_axis1"])
def test_linear_vmap(rng, mapped):
    B, m, k, n = 3, 5, 8, 6
    x, x64 = randn(rng, (B, m, k), jnp.float32)
    w, w64 = randn(rng, (B, k, n), jnp.float32)
    bias, b64 = randn(rng, (B, n), jnp.float32)
    res, r64 = randn(rng, (B, m, n), jnp.float32)
    use = {"x": mapped in ("x", "all"), "w": mapped in ("w", "all"), "bias": mapped in ("bias", "all"),
           "residual": mapped in ("residual", "all")}
    args = [x if use["x"] else x[0], w if use["w"] else w[0], bias if use["bias"] else bias[0],
            res if use["residual"] else res[0]]
    axes = [0 if use[k_] else None for k_ in ("x", "w", "bias", "residual")]
    if mapped == "x_axis1":
        args[0] = jnp.moveaxis(x, 0, 1)
        axes[0] = 1
        use["x"] = True
    f = jax.vmap(lambda x, w, b, r: jk.linear(x, w, b, activation="gelu", residual=r, precision=EXACT),
                 in_axes=tuple(axes))
    out = f(*args)
    X = x64 if use["x"] else x64[:1]
    W = w64 if use["w"] else w64[:1]
    Bb = b64[:, None, :] if use["bias"] else b64[:1, None, :]
    R = r64 if use["residual"] else r64[:1]
    ref = _act64("gelu", np.matmul(X, W) + Bb) + R
    assert_matmul_close(out, np.broadcast_to(ref, (B, m, n)), jnp.float32, k)
    assert _single_call(f, *args) == "jk_linear"


# ---- lowering -----------------------------------------------------------------------------------------

def test_jaxpr_and_hlo(rng):
    a, _ = randn(rng, (16, 32), jnp.bfloat16)
    b, _ = randn(rng, (32, 8), jnp.bfloat16)
    assert "jk_matmul" in str(jax.make_jaxpr(jk.matmul)(a, b))
    assert "jk_linear" in str(jax.make_jaxpr(lambda a, b: jk.linear(a, b, activation="gelu"))(a, b))
    assert _single_call(jk.matmul, a, b) == "jk_matmul"
    targets, text = custom_call_targets(lambda a, b: jk.linear(a, b, jnp.ones(8, jnp.bfloat16),
                                                               activation="gelu", residual=a[:, :8]), a, b)
    assert targets == ["jk_linear"]
    for op in ("dot_general", "erf", "tanh", "logistic"):
        assert op not in text


# ---- bad input ----------------------------------------------------------------------------------------

def _f32(*shape):
    return jnp.ones(shape, jnp.float32)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: jk.matmul(_f32(3, 4), jnp.ones((4, 5), jnp.bfloat16)), TypeError, r"matmul.*'b'.*float32"),
    (lambda: jk.matmul(jnp.ones((3, 4), jnp.int32), jnp.ones((4, 5), jnp.int32)), TypeError, r"matmul.*'a'.*int32"),
    (lambda: jk.matmul(_f32(3, 4), _f32(5, 6)), ValueError, r"matmul.*'b'.*contraction dim 4"),
    (lambda: jk.matmul(_f32(2, 3, 4), _f32(5, 4, 6)), ValueError, r"matmul.*'b'.*broadcast"),
    (lambda: jk.matmul(jnp.float32(1), _f32(4)), ValueError, r"matmul.*'a'.*scalar"),
    (lambda: jk.matmul([[1.0]], _f32(1, 1)), TypeError, r"matmul.*'a'.*array"),
    (lambda: jk.matmul(_f32(3, 4), _f32(4, 5), precision="fast"), ValueError, r"matmul.*'precision'.*'fast'"),
    (lambda: jk.matmul(_f32(3, 4), _f32(4, 5), precision=3), TypeError, r"matmul.*'precision'"),
    (lambda: jk.linear(_f32(3, 4), _f32(4, 5), activation="tanh"), ValueError, r"linear.*'activation'.*'tanh'"),
    (lambda: jk.linear(_f32(3, 4), _f32(4, 5), activation=1), TypeError, r"linear.*'activation'"),
    (lambda: jk.linear(_f32(3, 4), _f32(4, 5), _f32(4)), ValueError, r"linear.*'bias'.*\(5,\)"),
    (lambda: jk.linear(_f32(3, 4), _f32(4, 5), _f32(1, 5)), ValueError, r"linear.*'bias'"),
    (lambda: jk.linear(_f32(3, 4), _f32(4, 5), jnp.ones(5, jnp.float16)), TypeError, r"linear.*'bias'.*float32"),
    (lambda: jk.linear(_f32(3, 4), _f32(4, 5), residual=_f32(2, 3, 5)), ValueError, r"linear.*'residual'"),
    (lambda: jk.linear(_f32(3, 4), _f32(4, 5), residual=_f32(4, 5)), ValueError, r"linear.*'residual'"),
    (lambda: jk.linear(_f32(3, 4), _f32(4, 5), residual=jnp.ones((3, 5), jnp.bfloat16)), TypeError,
     r"linear.*'residual'"),
    (lambda: jk.linear(_f32(3, 4), _f32(4)), ValueError, r"linear.*'w'"),
    (lambda: jk.linear(_f32(3, 4), _f32(5, 6)), ValueError, r"linear.*'w'.*contraction"),
    (lambda: jk.matmul(_f32(*([1] * 9), 2, 2), _f32(2, 2)), ValueError, r"matmul.*batch dims"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def _ffi(name, out_shape, *args, **attrs):
    attrs = {k: np.int64(v) for k, v in attrs.items()}
    return jax.ffi.ffi_call(name, jax.ShapeDtypeStruct(out_shape, jnp.float32))(*args, **attrs)


@pytest.mark.parametrize("call, match", [
    (lambda: _ffi("jk_matmul", (3, 5), _f32(3, 4), _f32(6, 5), precision=0), "contraction"),
    (lambda: _ffi("jk_matmul", (3, 6), _f32(3, 4), _f32(4, 5), precision=0), "out"),
    (lambda: _ffi("jk_matmul", (3,), _f32(3), _f32(3), precision=0), "rank"),
    (lambda: _ffi("jk_matmul", (3, 5), _f32(3, 4), _f32(2, 4, 5), precision=0), "rank"),
    (lambda: _ffi("jk_matmul", (2, 3, 5), _f32(2, 3, 4), _f32(3, 4, 5), precision=0), "'b'"),
    (lambda: _ffi("jk_matmul", (3, 5), _f32(3, 4), jnp.ones((4, 5), jnp.float16), precision=0), "dtype"),
    (lambda: _ffi("jk_matmul", (3, 5), _f32(3, 4), _f32(4, 5), precision=7), "precision"),
    (lambda: _ffi("jk_linear", (3, 5), _f32(3, 4), _f32(4, 5), _f32(0), _f32(0), precision=0, activation=9),
     "activation"),
    (lambda: _ffi("jk_linear", (3, 5), _f32(3, 4), _f32(4, 5), _f32(1, 4), _f32(0), precision=0, activation=0),
     "bias"),
    (lambda: _ffi("jk_linear", (3, 5), _f32(3, 4), _f32(4, 5), _f32(0), _f32(2, 5), precision=0, activation=0),
     "residual"),
])
def test_handler_validation(call, match):
    with pytest.raises(Exception, match=match):
        jax.block_until_ready(call())


# ---- properties ---------------------------------------------------------------------------------------

@given(data=st.data())
def test_property_matmul(data):
    dtype = data.draw(st.sampled_from(FLOAT_DTYPES))
    m, k, n = (data.draw(st.integers(1, 40)) for _ in range(3))
    nb = data.draw(st.integers(0, 3))
    batch = [data.draw(st.integers(1, 3)) for _ in range(nb)]
    a_batch = [d if data.draw(st.booleans()) else 1 for d in batch]
    b_batch = [d if data.draw(st.booleans()) else 1 for d in batch][data.draw(st.integers(0, nb)):]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    a, a64 = randn(rng, tuple(a_batch) + (m, k), dtype)
    b, b64 = randn(rng, tuple(b_batch) + (k, n), dtype)
    act = data.draw(st.sampled_from(ACTIVATIONS))
    if data.draw(st.booleans()):
        out, ref = jk.matmul(a, b, precision=EXACT), np.matmul(a64, b64)
    else:
        bias, bias64 = randn(rng, (n,), dtype)
        out, ref = jk.linear(a, b, bias, activation=act, precision=EXACT), _act64(act, np.matmul(a64, b64) + bias64)
    assert_matmul_close(out, ref, dtype, k)


@pytest.mark.large
@pytest.mark.parametrize("tier", ["default", "wgmma"])
def test_large_output_past_2_31(rng, monkeypatch, tier):
    if tier == "wgmma":  # the Hopper tier on (by default it leaves K = 16 to the mma.sync tier)
        monkeypatch.setenv("JK_MATMUL_WGMMA", "1")
    # 2^31 + output elements: 64-bit offsets in the epilogue; checks a sample of rows.
    m, k, n = 65536 + 8, 16, 32768
    a, a64 = randn(rng, (m, k), jnp.bfloat16)
    b, b64 = randn(rng, (k, n), jnp.bfloat16)
    out = jk.matmul(a, b)
    rows = np.array([0, 1, 40000, m - 1])
    assert_matmul_close(np.asarray(out[rows]), a64[rows] @ b64, jnp.bfloat16, k)


# SkinnyPipe (bf16/f16, 2 <= M <= 16 by default, K % 8 == 0, N % 8 == 0, 16-byte aligned; sm_90): b streamed through a
# cp.async ring in row segments of CW columns (64/128/256; stages of 8192 / CW k rows), split-K over a
# cluster. Shapes cross M = 8 | 9 (one or two 8-row groups) and 16 | 17 (off the tier), K inside one stage,
# across stage and rank tails, N tails inside a column block; K % 8 != 0 and N % 8 != 0 fall back to the
# older tiers. JK_MATMUL_PIPE=1 forces the tier wherever it applies; on a GPU also the other widths and
# cluster sizes (a forced cluster of 8 at small K leaves ranks without any k: they add zeros); those variants set
# JK_MATMUL_DECODE=cluster, since by default the same problems go to SplitPipe where K splits into >= 2 ranks.
# SplitPipe (cuda/matmul/matmul_decode_split.cuh: 128-column CTAs, K ranks of 32-row stages, no cluster, float32
# partials in the lowering's workspace, then a sum + epilogue kernel): "split" forces it wherever it applies (M = 1
# and a single rank included), "split1" / "split3" / "split16" force 1 / 3 / 16 ranks (a rank's K rows round up to
# whole 32-row stages and ranks left without rows are dropped: K = 520 forced to 16 runs 9 ranks of 64 rows).
PIPE_SHAPES = [  # (M, K, N)
    (1, 8, 8), (1, 4096, 136), (3, 520, 264), (8, 4104, 4104), (8, 3000, 72), (9, 64, 16), (16, 2056, 264),
    (16, 16, 4096), (17, 520, 136), (8, 1030, 72), (4, 520, 12), (1, 4104, 1032)]  # the last: SplitPipe at M = 1
PIPE_VARIANTS = ["default", "on"] + (["cw128", "cw256", "c1", "c8", "cw128c8", "deep", "tma", "tmac1", "tmac8",
                                      "split", "split1", "split3", "split16"] if ON_GPU else [])
_PIPE_ENV = {"on": {}, "cw128": {"JK_MATMUL_PIPE_CW": "128"}, "cw256": {"JK_MATMUL_PIPE_CW": "256"},
             "c1": {"JK_MATMUL_PIPE_CLUSTER": "1"}, "c8": {"JK_MATMUL_PIPE_CLUSTER": "8"},
             "cw128c8": {"JK_MATMUL_PIPE_CW": "128", "JK_MATMUL_PIPE_CLUSTER": "8"},
             "deep": {"JK_MATMUL_PIPE_CW": "128", "JK_MATMUL_PIPE_STAGES": "8"},
             "tma": {"JK_MATMUL_PIPE_TMA": "1"}, "tmac1": {"JK_MATMUL_PIPE_TMA": "1", "JK_MATMUL_PIPE_CLUSTER": "1"},
             "tmac8": {"JK_MATMUL_PIPE_TMA": "1", "JK_MATMUL_PIPE_CLUSTER": "8"},
             "split": {"JK_MATMUL_DECODE": "split"}, "split1": {"JK_MATMUL_DECODE": "split", "JK_MATMUL_SPLIT_RANKS": "1"},
             "split3": {"JK_MATMUL_DECODE": "split", "JK_MATMUL_SPLIT_RANKS": "3"},
             "split16": {"JK_MATMUL_DECODE": "split", "JK_MATMUL_SPLIT_RANKS": "16"}}


@pytest.fixture
def pipe_variant(monkeypatch, request):
    if request.param != "default":
        monkeypatch.setenv("JK_MATMUL_PIPE", "1")
        if not request.param.startswith("split"):
            monkeypatch.setenv("JK_MATMUL_DECODE", "cluster")
        for k, v in _PIPE_ENV[request.param].items():
            monkeypatch.setenv(k, v)
    return request.param


@pytest.mark.parametrize("pipe_variant", PIPE_VARIANTS, indirect=True)
@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
@pytest.mark.parametrize("mkn", PIPE_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_pipe(rng, pipe_variant, dtype, mkn):
    m, k, n = mkn
    a, a64 = randn(rng, (m, k), dtype)
    b, b64 = randn(rng, (k, n), dtype)
    assert_matmul_close(jax.jit(jk.matmul)(a, b), a64 @ b64, dtype, k, None)


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
def test_matmul_pipe_b_past_l2(rng, dtype):
    """The default dispatch with b larger than a GPU's L2 cache (8192 x 4104 x 2 bytes = 67 MB; SkinnyPipe's TMA form
    took these until session 23, its cp.async form now); column tail block, two 8-row groups."""
    a, a64 = randn(rng, (12, 8192), dtype)
    b, b64 = randn(rng, (8192, 4104), dtype)
    assert_matmul_close(jax.jit(jk.matmul)(a, b), a64 @ b64, dtype, 8192, None)


@pytest.mark.parametrize("pipe_variant", PIPE_VARIANTS, indirect=True)
@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
def test_matmul_pipe_batched(rng, pipe_variant, dtype):
    a, a64 = randn(rng, (3, 12, 520), dtype)  # a and b batched
    b, b64 = randn(rng, (3, 520, 200), dtype)
    assert_matmul_close(jk.matmul(a, b), np.matmul(a64, b64), dtype, 520, None)
    a, a64 = randn(rng, (2, 1, 8, 1024), dtype)  # b batched, a broadcast over b's batch
    b, b64 = randn(rng, (1, 3, 1024, 136), dtype)
    assert_matmul_close(jk.matmul(a, b), np.matmul(a64, b64), dtype, 1024, None)
    a, a64 = randn(rng, (5, 2, 256), dtype)  # b shared: folded into M = 10
    b, b64 = randn(rng, (256, 72), dtype)
    assert_matmul_close(jax.vmap(jk.matmul, in_axes=(0, None))(a, b), np.matmul(a64, b64), dtype, 256, None)


@pytest.mark.parametrize("pipe_variant", PIPE_VARIANTS, indirect=True)
@pytest.mark.parametrize("activation", [None, "gelu", "silu"])
@pytest.mark.parametrize("m", [8, 13])
def test_linear_pipe_epilogue(rng, pipe_variant, activation, m):
    k, n = 2048, 264
    x, x64 = randn(rng, (m, k), jnp.bfloat16)
    w, w64 = randn(rng, (k, n), jnp.bfloat16, scale=1 / np.sqrt(k))
    bias, b64 = randn(rng, (n,), jnp.bfloat16)
    res, r64 = randn(rng, (m, n), jnp.bfloat16)
    out = jax.jit(lambda *a: jk.linear(*a, activation=activation, residual=res))(x, w, bias)
    assert_matmul_close(out, _act64(activation, x64 @ w64 + b64) + r64, jnp.bfloat16, 1, None)


@pytest.mark.parametrize("decode", ["cluster", "split"])
def test_matmul_pipe_nan_stays_in_its_row(rng, monkeypatch, decode):
    """A non-finite value in b outside a rank's K range must not leak into other outputs through the
    zero-filled padding (0 * inf): only the columns that read it are NaN."""
    monkeypatch.setenv("JK_MATMUL_PIPE", "1")
    monkeypatch.setenv("JK_MATMUL_DECODE", decode)
    a, a64 = randn(rng, (8, 1040), jnp.bfloat16)
    b, b64 = randn(rng, (1040, 136), jnp.bfloat16)
    b = b.at[1030, 5].set(jnp.inf)
    out = np.asarray(jnp.asarray(jk.matmul(a, b), jnp.float32))
    assert np.all(~np.isfinite(out[:, 5]))
    rest = np.delete(out, 5, axis=1)
    assert_matmul_close(rest, np.delete(a64 @ b64, 5, axis=1), jnp.bfloat16, 1040, None)


@pytest.mark.parametrize("res_shape", ["mn", "1n", "m1", "11"])
def test_linear_split_residual_broadcast(rng, monkeypatch, res_shape):
    """SplitPipe's sum kernel applies the epilogue: bias, gelu and a residual broadcast along either dim."""
    monkeypatch.setenv("JK_MATMUL_DECODE", "split")
    m, k, n = 6, 1032, 200
    x, x64 = randn(rng, (m, k), jnp.float16)
    w, w64 = randn(rng, (k, n), jnp.float16, scale=1 / np.sqrt(k))
    bias, b64 = randn(rng, (n,), jnp.float16)
    res, r64 = randn(rng, {"mn": (m, n), "1n": (1, n), "m1": (m, 1), "11": (1, 1)}[res_shape], jnp.float16)
    out = jax.jit(lambda *a: jk.linear(*a, activation="gelu", residual=res))(x, w, bias)
    assert_matmul_close(out, _act64("gelu", x64 @ w64 + b64) + r64, jnp.float16, 1, None)


@pytest.mark.parametrize("res_shape", [(1, 200), (5, 4, 200)])
def test_linear_decode_batched(rng, res_shape):
    """A batch of decode problems with w shared: with a residual broadcast over rows the handler keeps the batch
    apart (5 problems of 4 rows on SplitPipe's batch grid); with a full residual it folds them into M = 20."""
    x, x64 = randn(rng, (5, 4, 1032), jnp.bfloat16)
    w, w64 = randn(rng, (1032, 200), jnp.bfloat16, scale=1 / np.sqrt(1032))
    bias, b64 = randn(rng, (200,), jnp.bfloat16)
    res, r64 = randn(rng, res_shape, jnp.bfloat16)
    out = jax.jit(lambda *a: jk.linear(*a, activation="silu", residual=res))(x, w, bias)
    assert_matmul_close(out, _act64("silu", np.matmul(x64, w64) + b64) + r64, jnp.bfloat16, 1, None)


@pytest.mark.skipif(not ON_GPU, reason="the workspace is a result of the CUDA handler only")
@pytest.mark.parametrize("ws", ["small", "int32", "two"])
def test_matmul_workspace_result(rng, ws):
    """The CUDA handler's optional workspace result: too small for SplitPipe's partials runs SkinnyPipe (still right);
    a wrong dtype or a third result is an error naming it."""
    a, a64 = randn(rng, (8, 4096), jnp.bfloat16)
    b, b64 = randn(rng, (4096, 256), jnp.bfloat16)
    out = jax.ShapeDtypeStruct((8, 256), jnp.bfloat16)
    extra = {"small": [jax.ShapeDtypeStruct((16,), jnp.float32)], "int32": [jax.ShapeDtypeStruct((1 << 20,), jnp.int32)],
             "two": [jax.ShapeDtypeStruct((1 << 20,), jnp.float32)] * 2}[ws]
    call = jax.ffi.ffi_call("jk_matmul", [out] + extra)
    if ws == "small":
        assert_matmul_close(call(a, b, precision=np.int64(0))[0], a64 @ b64, jnp.bfloat16, 4096, None)
    else:
        with pytest.raises(Exception, match="workspace" if ws == "int32" else "results"):
            jax.block_until_ready(call(a, b, precision=np.int64(0)))


# Exact float32 below one wave of 64x64 tiles: split-K over a cluster (SimtRegisterBlocked, kSplitK), the
# partial tiles summed through distributed shared memory. JK_MATMUL_SIMT_SPLIT forces 1/2/4/8 ranks, with
# JK_MATMUL_SIMT_TILE=32 ("s") or 64 ("w", the default tile), "g2" two k groups of 256 threads a CTA
# (JK_MATMUL_SIMT_GROUPS=2) (GPU only; the CPU backend runs its kernel).
SPLIT_SHAPES = [(512, 256, 512), (256, 256, 256), (100, 1100, 132), (33, 64, 36), (70, 8, 260)]  # (M, K, N)
SPLIT_VARIANTS = ["default"] + (["s1", "s2", "s4", "s8", "w2", "w4", "w8", "w1g2", "w2g2", "w4g2", "w8g2"]
                                if ON_GPU else [])


@pytest.mark.parametrize("variant", SPLIT_VARIANTS)
@pytest.mark.parametrize("mkn", SPLIT_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_float32_split_k(rng, monkeypatch, mkn, variant):
    if variant != "default":
        if variant.endswith("g2"):  # two 256-thread k groups a CTA (JK_MATMUL_SIMT_GROUPS; "w1g2": no cluster)
            monkeypatch.setenv("JK_MATMUL_SIMT_GROUPS", "2")
            variant = variant[:-2]
        monkeypatch.setenv("JK_MATMUL_SIMT_SPLIT", variant[1:])
        monkeypatch.setenv("JK_MATMUL_SIMT_TILE", "64" if variant.startswith("w") else "32")
    m, k, n = mkn
    a, a64 = randn(rng, (m, k), jnp.float32)
    b, b64 = randn(rng, (k, n), jnp.float32)
    assert_matmul_close(jax.jit(lambda x, y: jk.matmul(x, y, precision=EXACT))(a, b), a64 @ b64, jnp.float32, k)
    a, a64 = randn(rng, (3, m, k), jnp.float32)  # batched
    b, b64 = randn(rng, (3, k, n), jnp.float32)
    assert_matmul_close(jk.matmul(a, b, precision=EXACT), np.matmul(a64, b64), jnp.float32, k)


# The ring kernel's epilogue: bias, activation and residual at float32 HIGHEST.
@pytest.mark.parametrize("variant", ["default"] + (["ring16", "ring32"] if ON_GPU else []))
@pytest.mark.parametrize("activation", [None, "gelu"])
def test_linear_float32_ring(rng, monkeypatch, variant, activation):
    if variant != "default":
        monkeypatch.setenv("JK_MATMUL_SIMT", variant)
    x, x64 = randn(rng, (100, 260), jnp.float32)
    w, w64 = randn(rng, (260, 196), jnp.float32, scale=1 / np.sqrt(260))
    bias, b64 = randn(rng, (196,), jnp.float32)
    res, r64 = randn(rng, (100, 196), jnp.float32)
    out = jk.linear(x, w, bias, activation=activation, residual=res, precision=EXACT)
    ref = x64 @ w64 + b64
    assert_matmul_close(out, (_act64(activation, ref) if activation else ref) + r64, jnp.float32, 260)


# The CUDA lowering of rows off 16-byte boundaries (M > 8): operands zero-padded by XLA around the same
# custom call, the output sliced back. Lowered for CUDA on any backend (no GPU needed to lower).
@pytest.mark.skipif(not jk.WITH_CUDA, reason="the CUDA lowering needs the CUDA targets")
@pytest.mark.parametrize("case", ["unaligned", "aligned", "skinny", "off", "float32"])
def test_cuda_lowering_pads_unaligned_rows(monkeypatch, case):
    m, k, n, dt = {"unaligned": (100, 30, 50, jnp.bfloat16), "aligned": (100, 32, 56, jnp.bfloat16),
                   "skinny": (8, 30, 50, jnp.bfloat16), "off": (100, 30, 50, jnp.bfloat16),
                   "float32": (100, 30, 50, jnp.float32)}[case]
    if case == "off":
        monkeypatch.setenv("JK_MATMUL_PAD", "0")
    a, b = jnp.ones((m, k), dt), jnp.ones((k, n), dt)
    bias, res = jnp.ones((n,), dt), jnp.ones((m, n), dt)
    f = jax.jit(lambda a, b, bias, res: jk.linear(a, b, bias, activation="gelu", residual=res))
    text = f.trace(a, b, bias, res).lower(lowering_platforms=("cuda",)).as_text()
    padded = case in ("unaligned", "float32")
    kp, np_ = ((32, 56) if dt == jnp.bfloat16 else (32, 52)) if padded else (k, n)
    call = [line for line in text.splitlines() if "stablehlo.custom_call @jk_linear" in line]
    assert len(call) == 1
    assert f"tensor<{m}x{kp}x" in call[0] and f"tensor<{kp}x{np_}x" in call[0], call[0]
    assert ("stablehlo.pad" in text) == padded and ("stablehlo.slice" in text) == padded


@pytest.mark.skipif(not jk.WITH_CUDA, reason="the CUDA lowering needs the CUDA targets")
@pytest.mark.parametrize("case", ["decode", "batched", "folded", "tall", "a_broadcast", "float32", "odd_n"])
def test_cuda_lowering_decode_workspace(case):
    """The CUDA lowering adds a float32 workspace result (16 ranks x batch x M x N) where SplitPipe may run, and only
    there; the primitive still has one output."""
    a_shape, b_shape, dt, ws = {
        "decode": ((8, 4096), (4096, 256), jnp.bfloat16, 16 * 8 * 256),
        "batched": ((3, 4, 64), (3, 64, 32), jnp.float16, 16 * 3 * 4 * 32),
        "folded": ((3, 4, 64), (64, 32), jnp.bfloat16, 16 * 12 * 32),  # b shared: M = 12 after the fold
        "tall": ((5, 4, 64), (64, 32), jnp.bfloat16, 0),  # M = 20 after the fold
        "a_broadcast": ((1, 4, 64), (5, 64, 32), jnp.bfloat16, 16 * 5 * 4 * 32),  # b batched: no fold
        "float32": ((8, 64), (64, 32), jnp.float32, 0),
        "odd_n": ((8, 64), (64, 30), jnp.bfloat16, 0)}[case]
    a, b = jnp.ones(a_shape, dt), jnp.ones(b_shape, dt)
    _assert_workspace(jax.jit(jk.matmul).trace(a, b), "jk_matmul", ws)


def _assert_workspace(traced, target, ws):
    """The one `target` custom call of the CUDA lowering has a float32 workspace result of ws elements (0: none)."""
    text = traced.lower(lowering_platforms=("cuda",)).as_text()
    call = [line for line in text.splitlines() if f"stablehlo.custom_call @{target}" in line]
    assert len(call) == 1
    results = call[0].split("->")[-1]
    assert results.count("tensor<") == (2 if ws else 1), call[0]
    assert (f"tensor<{ws}xf32>" in results) == bool(ws), call[0]


@pytest.mark.skipif(not jk.WITH_CUDA, reason="the CUDA lowering needs the CUDA targets")
@pytest.mark.parametrize("res_shape", [(5, 4, 32), (1, 32), None])
def test_cuda_lowering_linear_workspace_fold(res_shape):
    """linear over a batch of 5 x 4 rows with w shared: the handler folds the batch into M = 20 (no workspace) unless
    a residual broadcast over rows keeps the batch apart (4 rows each: a workspace)."""
    x, w, bias = jnp.ones((5, 4, 64), jnp.bfloat16), jnp.ones((64, 32), jnp.bfloat16), jnp.ones((32,), jnp.bfloat16)
    res = None if res_shape is None else jnp.ones(res_shape, jnp.bfloat16)
    f = jax.jit(lambda x, w, b: jk.linear(x, w, b, activation="gelu", residual=res))
    _assert_workspace(f.trace(x, w, bias), "jk_linear", 16 * 5 * 4 * 32 if res_shape == (1, 32) else 0)
