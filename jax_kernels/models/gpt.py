"""A GPT-2-style decoder forward pass (inference, no gradients) written once against an ops interface.

`forward(ops, params, tokens, cfg)` uses only `ops.layer_norm`, `ops.linear`, `ops.matmul`,
`ops.softmax` and `ops.transpose` for the work that matters, plus free reshapes, the embedding gather
and one small elementwise scale. `kernel_ops()` binds them to jax-kernels, `jnp_ops()` to the pure
jax.numpy equivalents (`jax_kernels.reference`), so the same model runs on either under one `jax.jit`:

    cfg = GPTConfig()                                     # GPT-2 small: 12 layers, 768 wide, 12 heads
    params = init_params(cfg, seed=0)
    logits = jax.jit(partial(forward, kernel_ops(), cfg=cfg))(params, tokens)   # (batch, seq, vocab)

Block: pre-LayerNorm causal self-attention (q/k/v projections, head split (0,2,1,3) and k to
(B,H,Dh,T) by transposes, scores by a batched matmul, causal softmax through `where=`, context by a
batched matmul, heads merged, output projection with the residual fused into `linear`), then an MLP
(`linear(activation="gelu")`, projection with the residual fused). Final LayerNorm and an untied
(width, vocab) head, so the logits are a plain `linear` (no transposed operand).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class GPTConfig:
    layers: int = 12
    width: int = 768
    heads: int = 12
    vocab: int = 50257
    max_seq: int = 1024
    mlp_ratio: int = 4
    dtype: str = "bfloat16"
    activation: str = "gelu"
    epsilon: float = 1e-5
    precision: str | None = None  # matmul precision for both implementations ("highest": exact float32)

    def __post_init__(self):
        if self.width % self.heads:
            raise ValueError(f"GPTConfig: width ({self.width}) must be divisible by heads ({self.heads})")

    @property
    def head_dim(self) -> int:
        return self.width // self.heads

    def n_params(self) -> int:
        d, f = self.width, self.mlp_ratio * self.width
        block = 4 * d + (3 * d * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d)
        return self.vocab * d + self.max_seq * d + self.layers * block + 2 * d + d * self.vocab


@dataclass(frozen=True)
class Ops:
    """The five ops the model is written against (signatures of the `jax_kernels` public API)."""
    layer_norm: Callable[..., Any]
    linear: Callable[..., Any]
    matmul: Callable[..., Any]
    softmax: Callable[..., Any]
    transpose: Callable[..., Any]
    name: str = "ops"

    @classmethod
    def from_namespace(cls, ns, name: str) -> "Ops":
        return cls(ns.layer_norm, ns.linear, ns.matmul, ns.softmax, ns.transpose, name)


def kernel_ops() -> Ops:
    import jax_kernels
    return Ops.from_namespace(jax_kernels, "jax_kernels")


def jnp_ops() -> Ops:
    from jax_kernels import reference
    return Ops.from_namespace(reference, "jnp")


def init_params(cfg: GPTConfig, seed: int = 0) -> dict:
    """Random weights (GPT-2's init scales), fixed seed, in cfg.dtype; biases and norm params random too,
    so no term of the computation is a no-op."""
    dt = jnp.dtype(cfg.dtype)
    d, f = cfg.width, cfg.mlp_ratio * cfg.width
    base, counter = jax.random.key(seed), iter(range(1 << 30))

    def normal(shape, std=0.02, mean=0.0):
        key = jax.random.fold_in(base, next(counter))
        return (mean + std * jax.random.normal(key, shape, jnp.float32)).astype(dt)

    proj_std = 0.02 / math.sqrt(2 * cfg.layers)
    blocks = []
    for _ in range(cfg.layers):
        blocks.append(dict(
            ln1_scale=normal((d,), 0.1, 1.0), ln1_bias=normal((d,)),
            w_q=normal((d, d)), b_q=normal((d,)), w_k=normal((d, d)), b_k=normal((d,)),
            w_v=normal((d, d)), b_v=normal((d,)), w_o=normal((d, d), proj_std), b_o=normal((d,)),
            ln2_scale=normal((d,), 0.1, 1.0), ln2_bias=normal((d,)),
            w_fc=normal((d, f)), b_fc=normal((f,)), w_proj=normal((f, d), proj_std), b_proj=normal((d,))))
    return dict(wte=normal((cfg.vocab, d)), wpe=normal((cfg.max_seq, d), 0.01), blocks=blocks,
                lnf_scale=normal((d,), 0.1, 1.0), lnf_bias=normal((d,)),
                w_head=normal((d, cfg.vocab)))


def _attention(ops: Ops, blk, h, mask, batch, seq, cfg: GPTConfig):
    nh, dh = cfg.heads, cfg.head_dim
    linear = partial(ops.linear, precision=cfg.precision)
    matmul = partial(ops.matmul, precision=cfg.precision)
    q = linear(h, blk["w_q"], blk["b_q"])                           # (B*T, D)
    k = linear(h, blk["w_k"], blk["b_k"])
    v = linear(h, blk["w_v"], blk["b_v"])
    q = q * jnp.asarray(1.0 / math.sqrt(dh), q.dtype)               # on (B*T, D), not on the scores
    q = ops.transpose(q.reshape(batch, seq, nh, dh), (0, 2, 1, 3))  # (B, H, T, Dh)
    kt = ops.transpose(k.reshape(batch, seq, nh, dh), (0, 2, 3, 1))  # (B, H, Dh, T)
    v = ops.transpose(v.reshape(batch, seq, nh, dh), (0, 2, 1, 3))  # (B, H, T, Dh)
    p = ops.softmax(matmul(q, kt), where=mask)                      # (B, H, T, T), causal
    ctx = ops.transpose(matmul(p, v), (0, 2, 1, 3))                 # (B, T, H, Dh)
    return ctx.reshape(batch * seq, nh * dh)


def forward(ops: Ops, params: dict, tokens, cfg: GPTConfig):
    """Logits (batch, seq, vocab) in cfg.dtype for int tokens (batch, seq), seq <= cfg.max_seq."""
    batch, seq = tokens.shape
    if seq > cfg.max_seq:
        raise ValueError(f"forward: tokens has seq={seq}, more than cfg.max_seq={cfg.max_seq}")
    d = cfg.width
    x = (params["wte"][tokens] + params["wpe"][:seq]).reshape(batch * seq, d)  # residual stream (B*T, D)
    mask = jnp.arange(seq)[None, :] <= jnp.arange(seq)[:, None]                 # (T, T), broadcast over B, H
    ln = partial(ops.layer_norm, epsilon=cfg.epsilon)
    linear = partial(ops.linear, precision=cfg.precision)
    for blk in params["blocks"]:
        ctx = _attention(ops, blk, ln(x, blk["ln1_scale"], blk["ln1_bias"]), mask, batch, seq, cfg)
        x = linear(ctx, blk["w_o"], blk["b_o"], residual=x)
        h = linear(ln(x, blk["ln2_scale"], blk["ln2_bias"]), blk["w_fc"], blk["b_fc"], activation=cfg.activation)
        x = linear(h, blk["w_proj"], blk["b_proj"], residual=x)
    x = ln(x, params["lnf_scale"], params["lnf_bias"])
    return linear(x, params["w_head"]).reshape(batch, seq, cfg.vocab)


def random_tokens(cfg: GPTConfig, batch: int, seq: int, seed: int = 1):
    return jax.random.randint(jax.random.key(seed), (batch, seq), 0, cfg.vocab, jnp.int32)
