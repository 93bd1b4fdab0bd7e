"""Shared test fixtures: one tolerance table, seeded random inputs, the backend in use.

Tolerances are per dtype and derived from the dtype's unit roundoff: the kernels compute in float32,
so the error against a float64 reference is dominated by rounding the output to the storage dtype
(bfloat16 eps 2^-8, float16 eps 2^-11) or by float32 accumulation.
"""
from __future__ import annotations

import os
import zlib

import jax

# Eight host devices for the sharding tests (must happen before the CPU backend starts); harmless for
# the other tests, which run on device 0, and for GPU runs, whose default backend is the GPU.
jax.config.update("jax_num_cpu_devices", 8)

import jax.numpy as jnp  # noqa: E402
import numpy as np
import pytest

import jax_kernels  # noqa: F401  (registers the FFI targets)
from hypothesis import settings

# Property tests: "ci" keeps the suite fast on 2 cores; JK_HYPOTHESIS_PROFILE=thorough for manual runs.
settings.register_profile("ci", max_examples=25, deadline=None)
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("JK_HYPOTHESIS_PROFILE", "ci"))

BACKEND = jax.default_backend()
ON_GPU = BACKEND == "gpu"

# GPU-only sizes (tensors past 2^31 elements, several GiB each): marked `large`, run only on the GPU with
# JK_LARGE_TESTS=1. bench/gpu_check.sh runs them in a second, serial pytest pass: next to parallel
# workers they exhausted GPU memory (theirs and the workers').
LARGE_TESTS = ON_GPU and os.environ.get("JK_LARGE_TESTS") == "1"


def pytest_configure(config):
    config.addinivalue_line("markers", "large: GPU-only multi-GiB case, runs with JK_LARGE_TESTS=1 on a GPU")


def pytest_collection_modifyitems(config, items):
    if LARGE_TESTS:
        return
    skip = pytest.mark.skip(reason="GPU-only large case (JK_LARGE_TESTS=1 on a GPU)")
    for item in items:
        if item.get_closest_marker("large") is not None:
            item.add_marker(skip)


# (rtol, atol) against a float64 reference, for elementwise-normalised outputs of O(1) magnitude.
TOLERANCE = {
    np.dtype(jnp.float32): (1e-5, 1e-5),
    np.dtype(jnp.bfloat16): (1.6e-2, 1.6e-2),
    np.dtype(jnp.float16): (2e-3, 2e-3),
}

FLOAT_DTYPES = [jnp.float32, jnp.bfloat16, jnp.float16]


def tol(dtype):
    return TOLERANCE[np.dtype(dtype)]


def assert_close(actual, expected, dtype=None, rtol=None, atol=None, scale=1.0):
    """Compares in float64; `scale` widens both tolerances (e.g. for long reductions)."""
    dtype = np.dtype(dtype if dtype is not None else np.asarray(actual).dtype)
    r, a = TOLERANCE.get(dtype, (0.0, 0.0))
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                               rtol=(rtol if rtol is not None else r) * scale,
                               atol=(atol if atol is not None else a) * scale)


@pytest.fixture
def rng(request):
    """A generator seeded from the test's name: reproducible, but different for every test."""
    seed = zlib.crc32(request.node.nodeid.encode())  # str hash() is salted per process: not reproducible
    return np.random.default_rng(seed)


def randn(rng, shape, dtype, scale=1.0, loc=0.0):
    """Random normal input in `dtype` (never zeros), returned with its exact float64 value."""
    x = (rng.standard_normal(shape) * scale + loc).astype(np.float32)
    xj = jnp.asarray(x, dtype=dtype)
    return xj, np.asarray(xj.astype(jnp.float32), dtype=np.float64)


def custom_call_targets(fn, *args, **kwargs):
    """The jk_* custom-call targets in the lowered StableHLO of jit(fn)(*args)."""
    import re
    text = jax.jit(fn, **kwargs).lower(*args).as_text()
    return re.findall(r'custom_call @(jk_\w+)', text), text
