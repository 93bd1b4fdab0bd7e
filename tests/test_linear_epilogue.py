"""linear's fused epilogue on the tensor-core tiers: the activations (GeluErfc, GeluTanh, Silu in
cuda/matmul/matmul_epilogue.cuh) against float64 over their whole range including the tails, and the Hopper
tier's schedules (cooperative 128x256 / ping-pong 128x128, JK_MATMUL_WGMMA_SCHED) and fused-epilogue paths
(StoreRow8 / TMA stores, JK_MATMUL_WGMMA_EPI) with every activation, bias and residual shape and dtype. The launchers read the environment at every launch, so monkeypatch selects a
variant; off an sm_90 GPU every variant runs the same code and only the default runs.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jax_kernels as jk
from conftest import ON_GPU, randn
from test_matmul import RES_SHAPES, _act64, assert_matmul_close, linear_case

ACTIVATIONS = [None, "relu", "gelu", "gelu_tanh", "silu"]
# wgmma_<schedule>_<epilogue>: the Hopper tier forced on with the cooperative or ping-pong schedule
# (JK_MATMUL_WGMMA_SCHED) and the fused epilogue through StoreRow8 or TMA stores (JK_MATMUL_WGMMA_EPI);
# mma: the mma.sync tier (same activations, other code path).
# coop64_tma: 128x64 tiles (JK_MATMUL_WGMMA=64), cooperative with TMA stores, their only configuration;
# coop64mc1_tma in multicast pairs (JK_MATMUL_WGMMA_MC=1). The TMA-store epilogue takes its lean "boxed" form
# (residual loaded by TMA into the output boxes; ping-pong: bias folded into the accumulators) wherever bias and
# residual are laid out for it; *_tma0 turns that form off (JK_MATMUL_WGMMA_BOXED=0), so the general form
# is tested on the same cases.
# *_tmal / *_tmarl: the cooperative boxed epilogue in its loop form everywhere / with a residual
# (JK_MATMUL_WGMMA_EPI_UNROLL=0 / 1); by default it is unrolled, except with a residual in pairs.
# *mcb*: multicast pairs along M sharing b (JK_MATMUL_WGMMA_MCB=1): ping-pong 128x128 and cooperative 128x256; the
# default runs them on the many-tiles cases with N % 16 == 8 (ping-pong pairs at 2176 x 2056).
# coop256_tma: cooperative 128x256 tiles alone (JK_MATMUL_WGMMA=256), the wide fused problems' default (bf16
# 4096^3 + bias gelu + residual), which the many-tiles cases here do not take by default (the cooperative schedule
# forced there runs 128x128 tiles).
WGMMA_FUSED = ["coop_row8", "coop_tma", "pingpong_row8", "pingpong_tma", "coop64_tma", "coop64mc1_tma",
               "coop_tma0", "pingpong_tma0", "pingpongmcb_tma", "pingpongmcb_tma0", "coop256mcb_tma",
               "coop_tmal", "coop256mcb_tmal", "coop_tmarl", "coop256_tma"]
TIER_VARIANTS = ["default"] + (["wgmma_" + v for v in WGMMA_FUSED] + ["mma"] if ON_GPU else [])


def set_wgmma_fused(monkeypatch, variant):
    """variant: "default" or "<schedule>_<epilogue>" from WGMMA_FUSED."""
    if variant != "default":
        sched, epi = variant.split("_")
        # The pairs on (*mcb) or off (the rest; by default fused epilogues on >= 2 x SMs tiles with N % 16 == 8 run
        # in pairs).
        monkeypatch.setenv("JK_MATMUL_WGMMA_MCB", "1" if sched.endswith("mcb") else "0")
        if sched.endswith("mcb"):
            sched = sched[:-3]
        if sched == "coop256":
            monkeypatch.setenv("JK_MATMUL_WGMMA", "256")
            sched = "coop"
        if sched.startswith("coop64"):  # coop64mc1: in multicast pairs
            if sched == "coop64mc1":
                monkeypatch.setenv("JK_MATMUL_WGMMA_MC", "1")
            sched = "coop"
            monkeypatch.setenv("JK_MATMUL_WGMMA", "64")
        if epi == "tma0":
            monkeypatch.setenv("JK_MATMUL_WGMMA_BOXED", "0")
            epi = "tma"
        if epi in ("tmal", "tmarl"):  # the cooperative boxed epilogue's loop form: everywhere, with a residual
            monkeypatch.setenv("JK_MATMUL_WGMMA_EPI_UNROLL", "0" if epi == "tmal" else "1")
            epi = "tma"
        monkeypatch.setenv("JK_MATMUL_WGMMA_SCHED", sched)
        monkeypatch.setenv("JK_MATMUL_WGMMA_EPI", epi)


def set_variant(monkeypatch, variant):
    if variant.startswith("wgmma_"):
        monkeypatch.setenv("JK_MATMUL_WGMMA", "1")
        set_wgmma_fused(monkeypatch, variant[len("wgmma_"):])
    elif variant == "mma":
        monkeypatch.setenv("JK_MATMUL_WGMMA", "0")


def gelu64(y):
    """Exact gelu through erfc: no cancellation in the negative tail."""
    return y * 0.5 * np.vectorize(math.erfc)(-y / math.sqrt(2))


def gelu_tanh64(y):
    """0.5 y (1 + tanh(u)) as y sigmoid(2u): in float64 too, 1 + tanh(u) cancels for u << 0 (30% off at
    u = -18)."""
    return y / (1 + np.exp(-2 * math.sqrt(2 / math.pi) * (y + 0.044715 * y ** 3)))


# x @ I is exact (one nonzero product per output, float32 accumulation), so the output is act(x) rounded
# to the output dtype: every element within 2 ulps (relative 2^-7 in bf16, 2^-10 in f16) of float64, down
# to the tails (outputs below the dtype's normal range within 2 of its smallest normal). The CPU twin uses
# the same cancellation-free forms (erfc, sigmoid), so the whole range runs on every backend.
@pytest.mark.parametrize("variant", TIER_VARIANTS)
@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
@pytest.mark.parametrize("activation", ["gelu", "gelu_tanh", "silu", "relu"])
def test_activations_against_float64_with_tails(monkeypatch, variant, dtype, activation):
    set_variant(monkeypatch, variant)
    lo = -13.0
    xs = np.concatenate([np.linspace(lo, 13.0, 512 * 256 - 2048), np.linspace(-1.0, 1.0, 2048)])
    x = jnp.asarray(xs.reshape(512, 256), dtype)
    x64 = np.asarray(x.astype(jnp.float32), np.float64)
    out = jax.jit(lambda a, b, c: jk.linear(a, b, c, activation=activation))(
        x, jnp.eye(256, dtype=dtype), jnp.zeros((256,), dtype))
    out = np.asarray(out.astype(jnp.float32), np.float64)
    want = {"gelu": gelu64, "gelu_tanh": gelu_tanh64}.get(activation, lambda y: _act64(activation, y))(x64)
    rtol = 2.0 ** -7 if np.dtype(dtype) == np.dtype(jnp.bfloat16) else 2.0 ** -10
    tiny = float(jnp.finfo(dtype).smallest_normal)
    big = np.abs(want) >= tiny
    np.testing.assert_allclose(out[big], want[big], rtol=rtol, atol=0)
    np.testing.assert_allclose(out[~big], want[~big], rtol=0, atol=2 * tiny)


# Both schedules with every activation and residual shape, over tiles with tails along M and N, and past
# the SM count (2176 x 2056 / 2048: 17 x 17 / 16 tiles of 128x128, CTAs alternate tiles between warpgroups).


@pytest.mark.parametrize("variant", ["default"] + (WGMMA_FUSED if ON_GPU else []))
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("res_shape", list(RES_SHAPES), ids=str)
@pytest.mark.parametrize("with_bias", [True] + ([False] if ON_GPU else []))
def test_linear_wgmma_schedules(rng, monkeypatch, variant, activation, res_shape, with_bias):
    monkeypatch.setenv("JK_MATMUL_WGMMA", "1")
    set_wgmma_fused(monkeypatch, variant)
    (x, w, bias, res), ref = linear_case(rng, 300, 136, 392, jnp.bfloat16, with_bias, res_shape)
    out = jax.jit(lambda *a: jk.linear(*a, activation=activation, residual=res))(x, w, bias)
    assert out.dtype == jnp.bfloat16
    assert_matmul_close(out, ref(activation), jnp.bfloat16, 1, None)


@pytest.mark.skipif(not ON_GPU, reason="many tiles: CUDA only")
@pytest.mark.parametrize("variant", ["default"] + WGMMA_FUSED)
@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
@pytest.mark.parametrize("k", [264, 1032])  # tiles alone: cooperative 128x128 (K <= 1024) or ping-pong
@pytest.mark.parametrize("n", [2056, 2048])  # b's rows mid-sector (pairs by default) or aligned (tiles alone)
@pytest.mark.parametrize("with_res", [True, False])
def test_linear_wgmma_more_tiles_than_sms(rng, monkeypatch, variant, dtype, k, n, with_res):
    set_wgmma_fused(monkeypatch, variant)
    m = 2176
    x, x64 = randn(rng, (m, k), dtype)
    w, w64 = randn(rng, (k, n), dtype, scale=1 / np.sqrt(k))
    bias, b64 = randn(rng, (n,), dtype)
    res, r64 = randn(rng, (m, n), dtype)
    out = jk.linear(x, w, bias, activation="gelu", residual=res if with_res else None)
    assert_matmul_close(out, _act64("gelu", x64 @ w64 + b64) + (r64 if with_res else 0), dtype, 1, None)


# Batched x and residual (a batch of residual matrices, and one broadcast over the batch) on both schedules.
@pytest.mark.parametrize("variant", ["default"] + (WGMMA_FUSED if ON_GPU else []))
@pytest.mark.parametrize("res_shape", [(3, 130, 264), (130, 264), (3, 1, 264), (3, 130, 1)], ids=str)
def test_linear_wgmma_batched_residual(rng, monkeypatch, variant, res_shape):
    monkeypatch.setenv("JK_MATMUL_WGMMA", "1")
    set_wgmma_fused(monkeypatch, variant)
    x, x64 = randn(rng, (3, 130, 72), jnp.bfloat16)
    w, w64 = randn(rng, (72, 264), jnp.bfloat16, scale=1 / np.sqrt(72))
    bias, b64 = randn(rng, (264,), jnp.bfloat16)
    res, r64 = randn(rng, res_shape, jnp.bfloat16)
    out = jk.linear(x, w, bias, activation="silu", residual=res)
    assert_matmul_close(out, _act64("silu", np.matmul(x64, w64) + b64) + r64, jnp.bfloat16, 1, None)


def test_linear_residual_dtype_must_match():
    x = jnp.ones((4, 8), jnp.bfloat16)
    w = jnp.ones((8, 8), jnp.bfloat16)
    with pytest.raises(TypeError, match="linear.*residual"):
        jk.linear(x, w, residual=jnp.ones((4, 8), jnp.float32))
    with pytest.raises(ValueError, match="linear.*residual"):
        jk.linear(x, w, residual=jnp.ones((5, 8), jnp.bfloat16))
