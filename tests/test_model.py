"""The GPT decoder written once against the ops interface: jax-kernels and pure jnp agree."""
from __future__ import annotations

import json
from functools import partial

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import pytest

from jax_kernels import bench
from jax_kernels.models import gpt

# precision="highest" on both sides: on a GPU, float32 DEFAULT lets XLA (and us) use TF32.
TINY = gpt.GPTConfig(layers=2, width=64, heads=4, vocab=97, max_seq=32, dtype="float32", precision="highest")


def _logits(ops, cfg, batch=2, seq=16):
    params = gpt.init_params(cfg, seed=0)
    tokens = gpt.random_tokens(cfg, batch, seq, seed=1)
    return jax.jit(partial(gpt.forward, ops, cfg=cfg))(params, tokens)


def test_float32_logits_agree():
    ours, ref = _logits(gpt.kernel_ops(), TINY), _logits(gpt.jnp_ops(), TINY)
    assert ours.shape == (2, 16, TINY.vocab) and ours.dtype == jnp.float32
    ours, ref = np.asarray(ours, np.float64), np.asarray(ref, np.float64)
    assert np.all(np.isfinite(ours))
    assert np.linalg.norm(ours - ref) / np.linalg.norm(ref) < 1e-5
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_bfloat16_logits_agree_loosely():
    cfg = gpt.GPTConfig(layers=2, width=64, heads=4, vocab=97, max_seq=32, dtype="bfloat16")
    ours = np.asarray(_logits(gpt.kernel_ops(), cfg).astype(jnp.float32), np.float64)
    ref = np.asarray(_logits(gpt.jnp_ops(), cfg).astype(jnp.float32), np.float64)
    assert np.linalg.norm(ours - ref) / np.linalg.norm(ref) < 3e-2


def _primitives(jaxpr) -> set[str]:
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for sub in jax.extend.core.jaxprs_in_params(eqn.params):
            names |= _primitives(sub)
    return names


def test_kernel_model_uses_the_kernels():
    """The jax-kernels instance does its matmuls, norms, softmax and head permutes through jk_* primitives."""
    params = gpt.init_params(TINY, seed=0)
    tokens = gpt.random_tokens(TINY, 1, 8)
    ours = _primitives(jax.make_jaxpr(partial(gpt.forward, gpt.kernel_ops(), cfg=TINY))(params, tokens).jaxpr)
    assert any(p.startswith("jk_") for p in ours), ours
    assert not ours & {"dot_general", "reduce_max", "reduce_sum", "exp", "rsqrt", "transpose"}, ours
    ref = _primitives(jax.make_jaxpr(partial(gpt.forward, gpt.jnp_ops(), cfg=TINY))(params, tokens).jaxpr)
    assert "dot_general" in ref and not any(p.startswith("jk_") for p in ref)


def test_config_validation():
    with pytest.raises(ValueError, match="heads"):
        gpt.GPTConfig(width=100, heads=3)
    with pytest.raises(ValueError, match="max_seq"):
        gpt.forward(gpt.jnp_ops(), gpt.init_params(TINY), jnp.zeros((1, 64), jnp.int32), TINY)


def test_model_command(tmp_path):
    path = tmp_path / "model.json"
    rc = bench.main(["--model", "--quick", "--layers", "1", "--width", "64", "--heads", "2", "--vocab", "128",
                     "--batch", "1", "--seq", "16", "--model-dtype", "float32", "--model-precision", "highest",
                     "--json", str(path)])
    m = json.loads(path.read_text())["model"]
    assert rc == 0, m
    assert m["tokens"] == 16 and m["config"]["layers"] == 1
    for impl in ("jax_kernels", "jnp"):
        assert m["impls"][impl]["wall_tokens_per_s"] > 0
    assert m["speedup_wall"] > 0 and m["logits_rel_err"] < 1e-5
