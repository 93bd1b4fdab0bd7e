"""Multi-device: every op partitions under a sharded jit without gathering the data.

Runs on the default backend's devices when there are several (the GPUs of a multi-GPU machine), else on
the 8 host devices conftest asks for (CI, one-GPU machines: the kernels' CPU twins, same partitioning).
Meshes: 2x4 on 8 devices, 2x2 on 4, and both 1x2 and 2x1 on 2 (a size-1 mesh axis shards nothing, so
specs are compared with such axes dropped and a collective is expected only over an axis of size > 1).
Each case checks: the result equals the unsharded one, the output sharding is the one the op's
partitioning promises, and the compiled module's collectives are exactly the expected ones (counted in
``jit(f).lower(...).compile().as_text()``): no all-gather anywhere.
"""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import jax_kernels as jk
from jax_kernels import reference as ref

COLLECTIVES = ("all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute")


def _devices():
    devs = jax.devices()
    if len(devs) < 2:
        devs = jax.devices("cpu")
    n = next((k for k in (8, 4, 2) if len(devs) >= k), len(devs))
    return devs[:n]


DEVICES = _devices()
MESH_SHAPES = {8: [(2, 4)], 4: [(2, 2)], 2: [(1, 2), (2, 1)]}.get(len(DEVICES), [])

pytestmark = pytest.mark.skipif(not MESH_SHAPES, reason="needs >= 2 devices")


@pytest.fixture(scope="module", params=MESH_SHAPES, ids=lambda s: f"mesh{s[0]}x{s[1]}")
def mesh(request):
    return make_mesh(request.param, jax.sharding.AxisType.Auto)


def make_mesh(shape, axis_type):
    return jax.make_mesh(shape, ("b", "h"), axis_types=(axis_type,) * 2, devices=DEVICES)


def size(mesh, entry) -> int:
    """Devices a spec entry (None, an axis name or a tuple of names) splits a dim over."""
    axes = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
    return int(np.prod([mesh.shape[a] for a in axes]))


def effective(mesh, spec) -> tuple:
    """The spec with size-1 mesh axes dropped (they shard nothing; the partitioner may drop them too)."""
    out = []
    for entry in spec:
        axes = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
        axes = tuple(a for a in axes if mesh.shape[a] > 1)
        out.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    return tuple(out)


def expected(mesh, entry, reduces) -> dict:
    """No collective but `reduces` all-reduces, when the dim they reduce over is split (entry's size > 1)."""
    return dict.fromkeys(COLLECTIVES, 0) | {"all-reduce": reduces if size(mesh, entry) > 1 else 0}


def collectives(compiled_text: str) -> dict:
    return {c: len(re.findall(rf"\b{c}(?:-start)?\(", compiled_text)) for c in COLLECTIVES}


def run(mesh, fn, args, specs):
    placed = [jax.device_put(a, NamedSharding(mesh, s)) for a, s in zip(args, specs)]
    f = jax.jit(fn)
    out = f(*placed)
    return out, collectives(f.lower(*placed).compile().as_text())


def rand(shape, dtype=jnp.float32, seed=0):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape).astype(np.float32), dtype)


def spec_of(a):
    return tuple(a.sharding.spec) + (None,) * (a.ndim - len(a.sharding.spec))


# (x spec, expected all-reduces): rows sharded -> none; the normalised axis sharded -> per-row statistics.
NORM_CASES = [(P("b", None), 0), (P(("b", "h"), None), 0), (P(None, "h"), 2), (P("b", "h"), 2),
              (P(None, ("b", "h")), 2)]


@pytest.mark.parametrize("spec,reduces", NORM_CASES, ids=str)
def test_layer_norm(mesh, spec, reduces):
    x, g, b = rand((16, 64)), rand((64,), seed=1), rand((64,), seed=2)
    fn = lambda x, g, b: jk.layer_norm(x, g, b, return_stats=True)
    (y, mean, rstd), coll = run(mesh, fn, (x, g, b), (spec, P(spec[1]), P(spec[1])))
    ye, me, re_ = ref.layer_norm(x, g, b, return_stats=True)
    np.testing.assert_allclose(y, ye, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mean, me, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd, re_, rtol=1e-5)
    assert effective(mesh, spec_of(y)) == effective(mesh, spec)
    assert effective(mesh, spec_of(mean)) == effective(mesh, (spec[0],))
    assert coll == expected(mesh, spec[1], reduces)


@pytest.mark.parametrize("spec,reduces", NORM_CASES, ids=str)
def test_rms_norm(mesh, spec, reduces):
    x, g = rand((16, 64)), rand((64,), seed=1)
    y, coll = run(mesh, lambda x, g: jk.rms_norm(x, g), (x, g), (spec, P(spec[1])))
    np.testing.assert_allclose(y, ref.rms_norm(x, g), rtol=1e-5, atol=1e-5)
    assert effective(mesh, spec_of(y)) == effective(mesh, spec)
    assert coll == expected(mesh, spec[1], min(reduces, 1))


def test_layer_norm_middle_axis_sharded(mesh):
    x = rand((4, 32, 8))
    y, coll = run(mesh, lambda x: jk.layer_norm(x, axis=1), (x,), (P("b", "h", None),))
    np.testing.assert_allclose(y, ref.layer_norm(x, axis=1), rtol=1e-5, atol=1e-5)
    assert effective(mesh, spec_of(y)) == effective(mesh, ("b", "h", None))
    assert coll == expected(mesh, "h", 2)


@pytest.mark.parametrize("spec,perm", [(P("b", "h"), (1, 0)), (P(None, "h", "b"), (2, 0, 1)),
                                       (P("b", None, "h", None), (0, 2, 1, 3))], ids=str)
def test_transpose(mesh, spec, perm):
    x = rand((8, 16, 8, 4)[:len(perm)])
    y, coll = run(mesh, lambda x: jk.transpose(x, perm), (x,), (spec,))
    np.testing.assert_array_equal(y, jnp.transpose(x, perm))
    assert effective(mesh, spec_of(y)) == effective(mesh, [spec[p] for p in perm])
    assert coll == dict.fromkeys(COLLECTIVES, 0)


# (a spec, b spec, expected output spec, expected all-reduces)
MATMUL_CASES = [
    (P("b", None), P(None, "h"), ("b", "h"), 0),        # rows x columns: local
    (P(("b", "h"), None), P(None, None), (("b", "h"), None), 0),
    (P(None, "h"), P("h", None), (None, None), 1),     # contraction sharded: partial products + psum
    (P("b", "h"), P("h", None), ("b", None), 1),
]


@pytest.mark.parametrize("sa,sb,out,reduces", MATMUL_CASES, ids=str)
def test_matmul(mesh, sa, sb, out, reduces):
    a, b = rand((32, 64)), rand((64, 48), seed=1)
    y, coll = run(mesh, lambda a, b: jk.matmul(a, b, precision="highest"), (a, b), (sa, sb))
    np.testing.assert_allclose(y, jnp.matmul(a, b, precision="highest"), rtol=2e-5, atol=2e-5)
    assert effective(mesh, spec_of(y)) == effective(mesh, out)
    assert coll == expected(mesh, sa[1], reduces)


@pytest.mark.parametrize("sa,sb,out,reduces", MATMUL_CASES, ids=str)
def test_linear_epilogue(mesh, sa, sb, out, reduces):
    x, w, bias, r = rand((32, 64)), rand((64, 48), seed=1), rand((48,), seed=2), rand((32, 48), seed=3)
    fn = lambda x, w, bias, r: jk.linear(x, w, bias, activation="gelu", residual=r, precision="highest")
    y, coll = run(mesh, fn, (x, w, bias, r), (sa, sb, P(sb[1]), P(sa[0], sb[1])))
    want = ref.linear(x, w, bias, activation="gelu", residual=r, precision="highest")
    np.testing.assert_allclose(y, want, rtol=2e-5, atol=2e-5)
    assert effective(mesh, spec_of(y)) == effective(mesh, out)
    assert coll["all-gather"] == 0 and coll["all-reduce"] == expected(mesh, sa[1], reduces)["all-reduce"]


def test_batched_matmul(mesh):
    a, b = rand((4, 16, 32)), rand((4, 32, 8), seed=1)
    y, coll = run(mesh, lambda a, b: jk.matmul(a, b, precision="highest"), (a, b),
                  (P("b", "h", None), P("b", None, None)))
    np.testing.assert_allclose(y, jnp.matmul(a, b, precision="highest"), rtol=2e-5, atol=2e-5)
    assert effective(mesh, spec_of(y)) == effective(mesh, ("b", "h", None))
    assert coll == dict.fromkeys(COLLECTIVES, 0)


def test_shard_map_body(mesh):
    """The ops inside a shard_map body run per shard (no partitioning involved)."""
    x, g = rand((16, 64)), rand((64,), seed=1)
    f = jax.jit(jax.shard_map(lambda x, g: jk.softmax(jk.layer_norm(x, g)), mesh=mesh,
                              in_specs=(P("b", None), P(None)), out_specs=P("b", None)))
    np.testing.assert_allclose(f(x, g), ref.softmax(ref.layer_norm(x, g)), rtol=1e-5, atol=1e-6)


def test_explicit_mesh(mesh):
    """Meshes with explicit axis types: sharding-in-types flows through the primitives."""
    emesh = make_mesh(tuple(mesh.shape.values()), jax.sharding.AxisType.Explicit)
    x = jax.device_put(rand((16, 64)), NamedSharding(emesh, P("b", None)))
    with jax.set_mesh(emesh):
        y = jax.jit(lambda x: jk.rms_norm(jk.transpose(jk.transpose(x, (1, 0)), (1, 0))))(x)
    np.testing.assert_allclose(y, ref.rms_norm(np.asarray(x)), rtol=1e-5, atol=1e-5)
    assert effective(emesh, spec_of(y)) == effective(emesh, ("b", None))


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("spec,reduces", NORM_CASES, ids=str)
def test_softmax(mesh, spec, reduces, log):
    x = rand((16, 64)) * 3
    mask = jnp.asarray(np.random.default_rng(5).random((1, 64)) > 0.3)
    ours, theirs = (jk.log_softmax, ref.log_softmax) if log else (jk.softmax, ref.softmax)
    y, coll = run(mesh, lambda x, m: ours(x, where=m), (x, mask), (spec, P(None, spec[1])))
    np.testing.assert_allclose(y, theirs(x, where=mask), rtol=1e-5, atol=1e-6)
    assert effective(mesh, spec_of(y)) == effective(mesh, spec)
    assert coll == expected(mesh, spec[1], reduces)


def test_causal_softmax_fully_masked_slices(mesh):
    """Causal rows whose whole slice on a device is masked: that slice contributes nothing."""
    x = rand((2, 16, 64))
    mask = jnp.tril(jnp.ones((16, 64), bool))
    y, _ = run(mesh, lambda x, m: jk.softmax(x, where=m), (x, mask), (P("b", None, "h"), P(None, "h")))
    np.testing.assert_allclose(y, ref.softmax(x, where=mask), rtol=1e-5, atol=1e-6)
