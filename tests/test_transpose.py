"""transpose against NumPy: every element size, every planner tier (copy, row copy, tiled with
16-byte accesses, tiled scalar for odd sizes, grouped axes, widened elements), jit, vmap, bad input.

A transpose is exact, so every comparison is bit-exact (np.array_equal on the raw values).
"""
from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, strategies as st

import jax_kernels as jk
from conftest import ON_GPU, custom_call_targets

DTYPES = [jnp.bool_, jnp.int8, jnp.uint8, jnp.int16, jnp.uint16, jnp.float16, jnp.bfloat16,
          jnp.int32, jnp.uint32, jnp.float32, jnp.complex64]
X64_DTYPES = [jnp.int64, jnp.uint64, jnp.float64]


def make(rng, shape, dtype):
    """Random values of `dtype` (never all zeros) as a jax array and its exact NumPy twin."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        v = rng.random(shape) < 0.5
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        v = rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, dtype=np.int64)
    elif dt.kind == "c":
        v = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    else:
        v = rng.standard_normal(shape)
    x = jnp.asarray(np.asarray(v).astype(dt))
    return x, np.asarray(x)


def check(x, xn, axes):
    y = jk.transpose(x, axes)
    expected = np.transpose(xn, axes)
    assert y.shape == expected.shape and y.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(y), expected)


def check_cases_jitted(rng, dtype, cases):
    """Each (shape, axes) of `cases` on random values through a fresh jitted transpose (a new executable, so the
    JK_TRANSPOSE_TIERS knob set by the caller is the one it runs with), bit-exact against NumPy."""
    for shape, axes in cases:
        x, xn = make(rng, shape, dtype)
        f = jax.jit(lambda t, a=axes: jk.transpose(t, a))
        np.testing.assert_array_equal(np.asarray(f(x)), np.transpose(xn, axes))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype(rng, dtype):
    # 2-D with 16-byte-friendly sizes (vector tier), an odd 3-D shape (scalar tier), a batched swap.
    for shape, axes in [((96, 160), None), ((5, 33, 7), (2, 0, 1)), ((3, 64, 48), (0, 2, 1)),
                        ((4, 6, 8, 2), (1, 0, 2, 3)), ((4, 6, 8, 3), (3, 1, 0, 2))]:
        x, xn = make(rng, shape, dtype)
        check(x, xn, axes)


@pytest.mark.parametrize("dtype", X64_DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_x64(rng, dtype):
    with jax.enable_x64(True):
        for shape, axes in [((40, 24), None), ((5, 33, 7), (2, 0, 1)), ((3, 5, 4), (1, 0, 2))]:
            x, xn = make(rng, shape, dtype)
            assert x.dtype == np.dtype(dtype)
            check(x, xn, axes)


# Sizes crossing the tile edges of every tier: 1, 3, 33 (< and > one tile), 1025 (a tile + 1),
# 4097 x 1023 (odd on both sides: scalar tier), multiples of 16 bytes (vector tier).
SIZES_2D = [(1, 3), (3, 1025), (33, 33), (1025, 33), (64, 128), (128, 256), (4097, 1023), (4096, 96),
            (130, 4097)]


@pytest.mark.parametrize("dtype", [jnp.int8, jnp.bfloat16, jnp.float32, jnp.complex64],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SIZES_2D, ids=str)
def test_2d_sizes(rng, dtype, shape):
    x, xn = make(rng, shape, dtype)
    check(x, xn, None)


@pytest.mark.parametrize("dtype", [jnp.int8, jnp.bfloat16, jnp.float32, jnp.complex64],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", [
    ((6, 96, 160), (0, 2, 1)),            # batched swap, vector tier
    ((3, 33, 1025), (0, 2, 1)),           # batched swap, odd
    ((2, 8, 16, 64), (0, 2, 1, 3)),       # attention head permute: row copy, 16-byte runs
    ((3, 5, 7, 3), (2, 0, 1, 3)),         # row copy, short odd runs
    ((8, 16, 32, 64, 2), (4, 0, 3, 1, 2)),  # short last axis: grouped tile axes
    ((64, 32, 2), (1, 0, 2)),             # short kept last axis: widened element
    ((16, 1, 24, 1, 40), (4, 3, 0, 2, 1)),  # size-1 axes dropped
    ((4, 6, 8, 10), (1, 0, 3, 2)),        # two independent swaps
    ((2, 3, 4, 5, 6, 7), (5, 3, 1, 0, 2, 4)),
    ((1, 4096), (1, 0)),                  # only a copy after dropping size-1 axes
    ((12, 34), (0, 1)),                   # identity
], ids=str)
def test_permutations(rng, dtype, case):
    shape, axes = case
    x, xn = make(rng, shape, dtype)
    check(x, xn, axes)


# The CUDA tiled tier has two index flavours (transpose_kernels.cuh): compact (32-bit, groups of 1-2
# axes, at most one batch axis, input <= 32 MiB or 1-byte elements on 16-byte accesses below the 256x256
# tile, one tile per block) and general (everything else). These
# cases sit on both sides of each condition, in both kernels (16-byte vector and scalar padded) and for
# every element size; the comments give the plan (groups A/B, batch axes) after merging.
FLAVOUR_CASES = [
    ((8, 16, 32, 64, 2), (4, 0, 3, 1, 2)),  # A 2 axes (128), B 1 (512), 1 batch: compact, split A
    ((5, 16, 33, 64, 2), (4, 0, 3, 1, 2)),  # same with a ragged B (528)
    ((5, 16, 33, 63, 2), (4, 0, 3, 1, 2)),  # A 126: element accesses, split A
    ((40, 2, 3, 2, 36), (0, 4, 2, 3, 1)),   # A 1 (36), B 2 axes (12), 1 batch: compact, split B
    ((6, 2, 2, 2, 7), (4, 1, 3, 0, 2)),     # A 2, B 2, 1 batch, odd: compact scalar, split both
    ((7, 5, 2, 3), (3, 1, 2, 0)),           # A 2, no batch
    ((3, 4, 40, 48), (1, 0, 3, 2)),         # 2 batch axes: general
    ((6, 3, 2, 3, 2), (2, 4, 0, 3, 1)),     # A 3 axes: general
    ((2, 3, 4, 5, 6, 7), (5, 3, 1, 0, 2, 4)),  # B 3 axes, 2 batch axes: general
    ((1024, 1024), (1, 0)),                 # 4-byte: 256 64x64 tiles < 2 x 132 SMs -> small tile
    ((1088, 1088), (1, 0)),                 # 289 tiles: big tile
    ((2048, 2048), (1, 0)),                 # 2-byte: 256 128x128 tiles -> small tile; 1-byte: 256
    ((2176, 2176), (1, 0)),                 # 289 tiles: big tile
    ((2048, 512), (1, 0)),                  # issue 5's small case
]
FLAVOUR_DTYPES = [jnp.int8, jnp.bfloat16, jnp.float32, jnp.float64]


@pytest.mark.parametrize("dtype", FLAVOUR_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", FLAVOUR_CASES, ids=str)
def test_tiled_flavours(rng, dtype, case):
    shape, axes = case
    with jax.enable_x64(dtype == jnp.float64):
        x, xn = make(rng, shape, dtype)
        assert x.dtype == np.dtype(dtype)
        check(x, xn, axes)


@pytest.mark.parametrize("dtype", FLAVOUR_DTYPES, ids=lambda d: np.dtype(d).name)
def test_compact_size_limit(rng, dtype):
    # Inputs of exactly 32 MiB take the compact flavour, 4 rows more the general one (16-byte kernel;
    # 1-byte elements stay compact, JK_TRANSPOSE_TIERS=s3 sends them to the general one: test below);
    # an odd width gives element accesses on each side of the line. Random bits (NaN payloads
    # included, compared as unsigned bits); a full row or column of y crosses every tile along its
    # axis, so sampled rows and columns (the ragged last tiles included) check the index math cheaply.
    e = np.dtype(dtype).itemsize
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[e]
    rows = (32 << 20) // (4096 * e)
    with jax.enable_x64(dtype == jnp.float64):
        for shape in [(rows, 4096), (rows + 4, 4096), ((32 << 20) // (4095 * e), 4095), (rows + 1, 4095)]:
            xn = np.frombuffer(rng.bytes(shape[0] * shape[1] * e), bits).reshape(shape)
            y = jk.transpose(jnp.asarray(xn.view(dtype)))
            assert y.dtype == np.dtype(dtype) and y.shape == shape[::-1]
            r = np.array([0, 1, 77, shape[1] // 2, shape[1] - 2, shape[1] - 1])
            c = np.array([0, 1, 333, shape[0] // 2, shape[0] - 2, shape[0] - 1])
            np.testing.assert_array_equal(np.asarray(y[r, :]).view(bits), xn[:, r].T)
            np.testing.assert_array_equal(np.asarray(y[:, c]).view(bits), xn[c, :].T)


@pytest.mark.parametrize("knob", ["", "s3"])
def test_int8_past_32mib_both_flavours(rng, monkeypatch, knob):
    # 1-byte 16-byte-access transposes over 32 MiB: compact flavour by default, general under "s3".
    monkeypatch.setenv("JK_TRANSPOSE_TIERS", knob)
    shape = ((32 << 20) // 4096 + 4, 4096)
    xn = np.frombuffer(rng.bytes(shape[0] * shape[1]), np.int8).reshape(shape)
    y = jax.jit(lambda t: jk.transpose(t))(jnp.asarray(xn))
    r = np.array([0, 1, 77, shape[1] // 2, shape[1] - 2, shape[1] - 1])
    c = np.array([0, 1, 333, shape[0] // 2, shape[0] - 2, shape[0] - 1])
    np.testing.assert_array_equal(np.asarray(y[r, :]), xn[:, r].T)
    np.testing.assert_array_equal(np.asarray(y[:, c]), xn[c, :].T)


@pytest.mark.parametrize("dtype", FLAVOUR_DTYPES, ids=lambda d: np.dtype(d).name)
def test_misaligned_slices_every_flavour(rng, dtype):
    # Odd element offsets inside a jit: not 16-byte aligned, so element accesses in both flavours.
    with jax.enable_x64(dtype == jnp.float64):
        for shape, axes in [((64, 96), (1, 0)), ((8, 16, 32, 64, 2), (4, 0, 3, 1, 2)),
                            ((3, 4, 40, 48), (1, 0, 3, 2))]:
            n = int(np.prod(shape))
            x, xn = make(rng, (3 + n,), dtype)
            f = jax.jit(lambda t, s=shape, a=axes: jk.transpose(t[3:].reshape(s), a))
            np.testing.assert_array_equal(np.asarray(f(x)), np.transpose(xn[3:].reshape(shape), axes))


# kTiledSmallCta (cuda/transpose/transpose_small_kernels.cuh), a lab tier forced by
# JK_TRANSPOSE_TIERS=smallcta (the launcher re-reads it at every launch), next to the default dispatch on
# the same cases. On CPU the knob changes nothing and the cases still check the plans. Shapes: ragged last
# tiles on multiples of every access width, multiples of 4 bytes only, odd sizes (only accesses of one
# element fit), split groups with a batch axis, and slices at element offsets that break 16-, 8- and 4-byte
# alignment. By default ragged 1- and 2-byte shapes take the swizzled tiles with 8- or 4-byte accesses where those fit
# (session 37), the rest the padded tiles with a 16-byte side or int8 word loads where those fit. Lab tokens run them
# too: "scalarodd" (the padded tiles for every ragged shape), "scalarodd,pad32" (1- and 2-byte elements on the 32x33
# padded tiles: the dispatch before session 37), "pad1" (64x65 tiles), "padvec0" (no 16-byte side), "padword0" (no
# word loads).
SMALL_CTA_CASES = [
    ((2048, 512), (1, 0)),                  # issue 5's small case
    ((48, 80), (1, 0)),                     # multiples of 16 elements, ragged 32- and 64-element tiles
    ((36, 20), (1, 0)),                     # multiples of 4 elements only
    ((40, 24), (1, 0)),                     # multiples of 8 elements only (int8: 8-byte accesses)
    ((34, 66), (1, 0)),                     # multiples of 2 only (bfloat16: 4-byte accesses)
    ((33, 48), (1, 0)),                     # rows of x 16-byte aligned (1- and 2-byte), y's odd
    ((48, 33), (1, 0)),                     # the reverse
    ((3, 67, 144), (0, 2, 1)),              # x's rows aligned, a batch axis
    ((33, 65), (1, 0)),                     # odd
    ((8, 16, 32, 64, 2), (4, 0, 3, 1, 2)),  # split A, one batch axis
    ((5, 16, 33, 64, 2), (4, 0, 3, 1, 2)),  # split A, ragged B
    ((40, 2, 3, 2, 36), (0, 4, 2, 3, 1)),   # split B
]


@pytest.mark.parametrize("knob", ["", "smallcta", "scalarodd", "scalarodd,pad32", "pad1", "padvec0", "padword0"])
@pytest.mark.parametrize("dtype", FLAVOUR_DTYPES, ids=lambda d: np.dtype(d).name)
def test_small_cta_tier(rng, monkeypatch, knob, dtype):
    monkeypatch.setenv("JK_TRANSPOSE_TIERS", knob)
    with jax.enable_x64(dtype == jnp.float64):
        check_cases_jitted(rng, dtype, SMALL_CTA_CASES)
        for offset in (1, 2, 4):
            x, xn = make(rng, (offset + 64 * 96,), dtype)
            f = jax.jit(lambda t, o=offset: jk.transpose(t[o:].reshape(64, 96)))
            np.testing.assert_array_equal(np.asarray(f(x)), xn[offset:].reshape(64, 96).T)


# The compact tiles' two grids (session 38): by default a grid of tiles where there is no batch axis, a 1-D grid
# otherwise; lab tokens "grid1" (the 1-D grid everywhere) and "grid3" (the grid of tiles with a batch axis too), with
# "reg" (register blocks at any size) and "scalarodd" (padded tiles for ragged shapes). Cases: issue 5's small one,
# several waves of big tiles (2-D, batched, a split group), ragged last tiles, a batch axis (the grid's z), and ragged
# shapes on the padded tiles.
GRID_CASES = [
    ((2048, 512), (1, 0)),                  # the small tier (register blocks for 4-byte elements)
    ((3, 1040, 2080), (0, 2, 1)),           # several waves of big tiles, a batch axis, ragged last tiles
    ((4200, 4100), (1, 0)),                 # several waves, no batch axis
    ((40, 2, 3, 64, 96), (0, 4, 2, 3, 1)),  # split B
    ((8, 16, 32, 64, 2), (4, 0, 3, 1, 2)),  # split A, one batch axis
    ((3, 67, 1023), (0, 2, 1)),             # ragged: padded tiles (grid3 there too)
    ((5, 40, 2, 33), (0, 3, 2, 1)),         # ragged, split B
]


@pytest.mark.parametrize("knob", ["", "grid1", "grid3", "reg,grid1", "reg,grid3", "scalarodd,grid3"])
@pytest.mark.parametrize("dtype", FLAVOUR_DTYPES, ids=lambda d: np.dtype(d).name)
def test_compact_grids(rng, monkeypatch, knob, dtype):
    monkeypatch.setenv("JK_TRANSPOSE_TIERS", knob)
    with jax.enable_x64(dtype == jnp.float64):
        check_cases_jitted(rng, dtype, GRID_CASES)


# The lean 32x33 tile (kTiledPaddedLean, session 39): small 2-D 4-byte problems with both sides multiples of 32, on a
# grid of tiles; by default and with the lab token "nolean" (the register blocks there). Cases: issue 5's small one, a
# single tile, sides that are not powers of two, wide and tall ones, axes that merge into two groups, and neighbours
# that do not take it (a side not a multiple of 32, a batch axis, a split group).
LEAN_CASES = [
    ((2048, 512), (1, 0)),
    ((32, 32), (1, 0)),
    ((96, 160), (1, 0)),
    ((32, 4096), (1, 0)),
    ((4096, 64), (1, 0)),
    ((4, 8, 64, 32), (2, 3, 0, 1)),  # merges to a 32 x 2048 transpose
    ((2048, 520), (1, 0)),           # 520 is not a multiple of 32
    ((3, 64, 96), (0, 2, 1)),        # a batch axis
    ((4, 2, 3, 64, 96), (0, 4, 2, 3, 1)),  # a split group (B) and a batch axis
]


@pytest.mark.parametrize("knob", ["", "nolean"])
@pytest.mark.parametrize("dtype", [jnp.float32, jnp.int32, jnp.int8, jnp.float64], ids=lambda d: np.dtype(d).name)
def test_lean_tile(rng, monkeypatch, knob, dtype):
    monkeypatch.setenv("JK_TRANSPOSE_TIERS", knob)
    with jax.enable_x64(dtype == jnp.float64):
        check_cases_jitted(rng, dtype, LEAN_CASES)


# A short side (kTiledNarrow, transpose_small_kernels.cuh: at most 16 elements against at least 256, from 2^18
# elements): NHWC <-> NCHW with C = 3, both directions, a short side of 16, ragged long sides, a split group of the
# short side, no batch axis, rows on and off 16-byte boundaries (16-byte accesses or element accesses); by default,
# with the lab token "narrowscalar" (element accesses only) and "nonarrow" (the square tiles).
NARROW_CASES = [
    ((16, 128, 128, 3), (0, 3, 1, 2)),   # A short (3), B 16384, 1 batch axis
    ((4, 3, 256, 257), (0, 2, 3, 1)),    # B short (3), A 65792
    ((4, 3, 104, 250), (0, 2, 3, 1)),    # B short (3), A 26000: ragged last tile, 16-byte rows for 2-byte and wider
    ((8, 70000, 3), (0, 2, 1)),          # A short (3), ragged last tile
    ((2, 30000, 16), (0, 2, 1)),         # A short (16)
    ((1, 5, 70001), (0, 2, 1)),          # B short (5), odd long side
    ((70001, 7), (1, 0)),                # no batch axis
    ((2, 2, 40000, 3), (3, 1, 0, 2)),    # A short (3); B = axes 2, 1 (not mergeable): split B, no batch
    ((9000, 4, 2, 8), (1, 3, 2, 0)),     # output (4, 8, 2, 9000): A = axes 1, 3 split (short), B 9000
]


@pytest.mark.parametrize("knob", ["", "narrowscalar", "nonarrow"])
@pytest.mark.parametrize("dtype", FLAVOUR_DTYPES, ids=lambda d: np.dtype(d).name)
def test_narrow_side_tier(rng, monkeypatch, knob, dtype):
    monkeypatch.setenv("JK_TRANSPOSE_TIERS", knob)
    with jax.enable_x64(dtype == jnp.float64):
        check_cases_jitted(rng, dtype, NARROW_CASES)


# Row copies (last axis kept), default and under the lab token "rowbulk" (runs of 16..256 bytes on the bulk
# copy engine, sm_90; transpose_bulk_kernels.cuh). Runs of 16, 128 (the attention permute: the lean output-order
# copy since session 35), 256 and 272 bytes, a run that is not a multiple of 16 bytes, a ragged last chunk (runs not
# dividing the 8 KB chunk), and a misaligned slice. Session 32's tokens "rowtma" / "rowtma16" (tensor-map boxes of
# about 8 / 16 KB, sm_90): boxes ragged at both row axes' ends (37 x 45 runs), and five row axes (more than the
# tensor maps' dimensions: the default row copy). Session 35's "rc256x2" (the output-order 16-byte row copy as in
# session 34), "rcslow" (its 128 x 1 shape with division instructions; the default divides by precomputed
# multipliers), "rcout" (runs of up to 256 bytes, the input-order limit since session 36, in output order), "rcin128"
# (the input-order copy at 128 x 1 with the multipliers) and "rclean0" (RowCopy's form where the lean copy would run),
# alone and without the tiled row copy; session 36's "rcinlean" (16-byte runs of any length in input order; the lean
# form wherever it fits, as the default's input order since session 36).
ROW_CASES = [((2, 8, 16, 64), (0, 2, 1, 3)), ((3, 5, 7, 16), (1, 0, 2, 3)), ((5, 33, 128), (1, 0, 2)),
             ((4, 9, 136), (1, 0, 2)), ((3, 7, 5, 24), (2, 0, 1, 3)), ((7, 3, 96), (1, 0, 2)),
             ((3, 37, 45, 64), (0, 2, 1, 3)), ((2, 3, 4, 5, 6, 8), (4, 3, 2, 1, 0, 5))]


@pytest.mark.parametrize("knob", ["", "rowbulk", "rowtma", "rowtma16", "rc256x2", "rcslow", "rcout", "norowtile,rcout",
                                  "norowtile,rc256x2,rcout", "norowtile,rcin128", "rclean0", "norowtile,rcout,rclean0",
                                  "rcinlean", "norowtile,rcinlean"])
@pytest.mark.parametrize("dtype", FLAVOUR_DTYPES, ids=lambda d: np.dtype(d).name)
def test_row_copy_knobs(rng, monkeypatch, knob, dtype):
    monkeypatch.setenv("JK_TRANSPOSE_TIERS", knob)
    with jax.enable_x64(dtype == jnp.float64):
        check_cases_jitted(rng, dtype, ROW_CASES)
        x, xn = make(rng, (1 + 4 * 6 * 64,), dtype)
        f = jax.jit(lambda t: jk.transpose(t[1:].reshape(4, 6, 64), (1, 0, 2)))
        np.testing.assert_array_equal(np.asarray(f(x)), np.transpose(xn[1:].reshape(4, 6, 64), (1, 0, 2)))


# Session 33's tiled row copy (kRowCopyTiled, cuda/transpose/transpose_rowtile_kernels.cuh): runs of 16, 32, 64 and
# 128 bytes of every element size (1, 2, 4, 8) under the lab tokens "rowtile4k" / "rowtile8k" / "rowtile16k" (tiles
# of 16x16 to 32x32 runs at 16 bytes, 8x4 to 16x8 at 128), "rowtilea" (A-fastest tile order), "norowtile" and the
# default. The leading axes are permuted, the last (the run) kept: both row axes ragged at every tile size (3, 33,
# 1025, 37 x 45, 130 x 70), whole tiles (64 x 48), one and two batch axes before, between and after the row axes,
# size-1 axes (dropped by the planner). Then runs the tier leaves to the other row copies: 48 bytes (3 vectors, input
# order), 256 bytes (output order), and a misaligned slice. Since session 35 the default leaves 128 bytes to the lean
# output-order copy; the tokens still stage them. On CPU the tokens change nothing and the cases still check the plans.
ROW_TILE_LEADING = [((3, 33), (1, 0)), ((1025, 3), (1, 0)), ((33, 1025), (1, 0)), ((64, 48), (1, 0)),
                    ((2, 37, 45), (0, 2, 1)), ((4, 130, 70), (0, 2, 1)), ((2, 3, 4, 5), (3, 0, 2, 1)),
                    ((4, 3, 5, 2), (2, 3, 0, 1)), ((3, 17, 2, 9), (3, 1, 0, 2)), ((1, 40, 1, 40), (3, 0, 2, 1))]


def row_tile_cases(itemsize, runs=(16, 32, 64, 128)):
    """(shape, axes) of ROW_TILE_LEADING with a kept last axis of each run length (bytes) in `runs`."""
    return [(lead + (run // itemsize,), perm + (len(lead),))
            for lead, perm in ROW_TILE_LEADING for run in runs]


@pytest.mark.parametrize("knob", ["", "rowtile4k", "rowtile8k", "rowtile16k", "rowtile8k,rowtilea", "norowtile"])
@pytest.mark.parametrize("dtype", FLAVOUR_DTYPES, ids=lambda d: np.dtype(d).name)
def test_row_tile_tier(rng, monkeypatch, knob, dtype):
    monkeypatch.setenv("JK_TRANSPOSE_TIERS", knob)
    with jax.enable_x64(dtype == jnp.float64):
        item = np.dtype(dtype).itemsize
        check_cases_jitted(rng, dtype, row_tile_cases(item))
        check_cases_jitted(rng, dtype, row_tile_cases(item, (48, 256))[:8])
        for shape, axes in row_tile_cases(item, (32,))[:3]:  # misaligned slices: not 16-byte aligned
            n = int(np.prod(shape))
            x, xn = make(rng, (n + 1,), dtype)
            f = jax.jit(lambda t, s=shape, a=axes: jk.transpose(t[1:].reshape(s), a))
            np.testing.assert_array_equal(np.asarray(f(x)), np.transpose(xn[1:].reshape(shape), axes))


@pytest.mark.parametrize("knob", ["", "rowtile8k,rowtilep", "rowtile4k,rowtilea,rowtilep"])
def test_row_tile_resident_grid(rng, monkeypatch, knob):
    """"rowtilep" (lab): a resident grid of 8 CTAs an SM, each looping over tiles: 4096-16384 tiles here, so every
    CTA takes several (the default launches one CTA a tile)."""
    monkeypatch.setenv("JK_TRANSPOSE_TIERS", knob)
    check_cases_jitted(rng, jnp.float32, [((1024, 1024, 8), (1, 0, 2)), ((3, 700, 900, 4), (0, 2, 1, 3))])
    check_cases_jitted(rng, jnp.bfloat16, [((16, 512, 64, 64), (0, 2, 1, 3))])


def test_ranks_0_to_6_all_small_permutations(rng):
    check(*make(rng, (), jnp.float32), None)
    check(*make(rng, (), jnp.float32), ())
    check(*make(rng, (7,), jnp.int16), (0,))
    for rank in range(2, 5):
        shape = (2, 3, 5, 4)[:rank]
        x, xn = make(rng, shape, jnp.float32)
        for axes in itertools.permutations(range(rank)):
            check(x, xn, axes)
    for rank in (5, 6):
        shape = (3, 2, 4, 1, 5, 3)[:rank]
        x, xn = make(rng, shape, jnp.int8)
        for _ in range(6):
            check(x, xn, tuple(rng.permutation(rank)))


def test_axes_semantics(rng):
    x, xn = make(rng, (2, 3, 4), jnp.float32)
    check(x, xn, None)
    check(x, xn, (-1, 0, -2))
    np.testing.assert_array_equal(np.asarray(jk.transpose(x, [2, 1, 0])), xn.T)
    np.testing.assert_array_equal(np.asarray(jk.transpose(x, np.array([1, 2, 0]))),
                                  np.transpose(xn, (1, 2, 0)))
    # The identity needs no kernel: the input comes back.
    assert jk.transpose(x, (0, 1, 2)) is x
    assert "jk_transpose" not in str(jax.make_jaxpr(lambda t: jk.transpose(t, (0, 1, 2)))(x))
    # NumPy input works like jnp.transpose.
    np.testing.assert_array_equal(np.asarray(jk.transpose(xn, (1, 0, 2))), np.transpose(xn, (1, 0, 2)))


@given(data=st.data())
def test_property_random_permutations(data):
    rank = data.draw(st.integers(0, 6), label="rank")
    shape = tuple(data.draw(st.lists(st.sampled_from([1, 2, 3, 5, 8, 17, 33]), min_size=rank,
                                     max_size=rank), label="shape"))
    if int(np.prod(shape)) > 200_000:
        shape = tuple(min(s, 5) for s in shape)
    axes = tuple(data.draw(st.permutations(range(rank)), label="axes"))
    dtype = data.draw(st.sampled_from([jnp.bool_, jnp.uint8, jnp.float16, jnp.int32, jnp.complex64]))
    seed = data.draw(st.integers(0, 2**31), label="seed")
    x, xn = make(np.random.default_rng(seed), shape, dtype)
    check(x, xn, axes)


def test_jit_jaxpr_and_lowering(rng):
    x, xn = make(rng, (16, 24, 8), jnp.float32)
    f = lambda t: jk.transpose(t, (2, 0, 1))
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), np.transpose(xn, (2, 0, 1)))
    assert "jk_transpose[" in str(jax.make_jaxpr(f)(x))
    targets, text = custom_call_targets(f, x)
    assert targets == ["jk_transpose"]
    assert "stablehlo.transpose" not in text


@pytest.mark.parametrize("in_axis", [0, 1, 2, 3])
def test_vmap_each_axis(rng, in_axis):
    x, xn = make(rng, (3, 4, 5, 6), jnp.bfloat16)
    f = lambda t: jk.transpose(t, (2, 0, 1))
    y = jax.vmap(f, in_axes=in_axis)(x)
    expected = np.stack([np.transpose(np.take(xn, i, axis=in_axis), (2, 0, 1))
                         for i in range(xn.shape[in_axis])])
    np.testing.assert_array_equal(np.asarray(y), expected)
    targets, text = custom_call_targets(jax.vmap(f, in_axes=in_axis), x)
    assert targets == ["jk_transpose"]
    assert "stablehlo.while" not in text and "stablehlo.transpose" not in text


def test_nested_vmap_and_out_axes(rng):
    x, xn = make(rng, (2, 3, 4, 5), jnp.int32)
    f = jax.vmap(jax.vmap(lambda t: jk.transpose(t), in_axes=1), in_axes=0, out_axes=2)
    y = f(x)
    expected = np.moveaxis(np.stack([np.stack([xn[i, :, j].T for j in range(4)]) for i in range(2)]),
                           0, 2)
    np.testing.assert_array_equal(np.asarray(y), expected)
    assert custom_call_targets(f, x)[0] == ["jk_transpose"]


def test_zero_size(rng):
    for shape, axes in [((0, 3), None), ((2, 0, 5), (2, 0, 1)), ((0,), None), ((4, 0), (1, 0))]:
        x = jnp.zeros(shape, jnp.float32)
        y = jk.transpose(x, axes)
        assert y.shape == np.transpose(np.zeros(shape), axes).shape


def test_nan_and_inf_move_untouched(rng):
    x, xn = make(rng, (33, 65), jnp.float32)
    xn = xn.copy()
    xn[3, :] = np.nan
    xn[5, 7] = np.inf
    xn[6, 8] = -0.0
    y = np.asarray(jk.transpose(jnp.asarray(xn)))
    assert np.array_equal(y.view(np.uint32), xn.T.view(np.uint32))  # bit-exact, NaN payloads included


def test_input_not_modified(rng):
    x, xn = make(rng, (64, 96), jnp.float32)
    before = xn.copy()
    jax.block_until_ready(jk.transpose(x))
    np.testing.assert_array_equal(np.asarray(x), before)


def test_misaligned_slice_inside_jit(rng):
    # A slice at an odd element offset is not 16-byte aligned: the kernels must take the scalar path.
    x, xn = make(rng, (1 + 64 * 96,), jnp.float32)
    f = jax.jit(lambda t: jk.transpose(t[1:].reshape(64, 96)))
    np.testing.assert_array_equal(np.asarray(f(x)), xn[1:].reshape(64, 96).T)
    x8, xn8 = make(rng, (3 + 128 * 256,), jnp.int8)
    g = jax.jit(lambda t: jk.transpose(t[3:].reshape(2, 128, 128), (0, 2, 1)))
    np.testing.assert_array_equal(np.asarray(g(x8)), np.transpose(xn8[3:].reshape(2, 128, 128), (0, 2, 1)))


def test_inside_a_larger_jit(rng):
    # Head split / merge as in attention, chained with other ops.
    x, xn = make(rng, (2, 16, 4 * 32), jnp.float32)

    def f(t):
        h = jk.transpose(t.reshape(2, 16, 4, 32), (0, 2, 1, 3)) * 2.0
        return jk.transpose(h, (0, 2, 1, 3)).reshape(2, 16, 128) + 1.0

    np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), xn * 2.0 + 1.0, rtol=0, atol=0)


# ---- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize("axes, err, match", [
    ((0, 1), ValueError, r"transpose: argument 'axes': expected a permutation of 3 axes"),
    ((0, 1, 1), ValueError, r"transpose: argument 'axes': expected each axis exactly once"),
    ((0, 1, 3), ValueError, r"transpose: argument 'axes': expected axes in \[-3, 3\)"),
    ((0, 1, -4), ValueError, r"transpose: argument 'axes': expected axes in \[-3, 3\)"),
    ((0, 1.0, 2), TypeError, r"transpose: argument 'axes': expected a sequence of ints"),
    ((0, True, 2), TypeError, r"transpose: argument 'axes': expected a sequence of ints"),
    ("abc", TypeError, r"transpose: argument 'axes'"),
    (1.5, TypeError, r"transpose: argument 'axes': expected None or a sequence of ints"),
])
def test_bad_axes(axes, err, match):
    with pytest.raises(err, match=match):
        jk.transpose(jnp.zeros((2, 3, 4)), axes)


def test_rank_limit_after_merging(rng):
    # 17 axes that stay apart exceed the planner's 16; the same rank with merges is fine.
    x, xn = make(rng, (2,) * 17, jnp.int8)
    with pytest.raises(ValueError, match=r"transpose: argument 'axes': expected a permutation that leaves at most 16"):
        jk.transpose(x)
    check(x, xn, (1, 0) + tuple(range(2, 17)))
    check(*make(rng, (1,) * 20 + (3, 4), jnp.float32), None)  # size-1 axes do not count


def test_bad_dtype_and_type():
    with pytest.raises(TypeError, match=r"transpose: argument 'x': expected a dtype of 1, 2, 4 or 8 bytes"):
        jk.transpose(np.zeros((2, 3), np.complex128))
    with pytest.raises(TypeError, match=r"transpose: argument 'x': expected a dtype of 1, 2, 4 or 8 bytes"):
        jk.transpose(jnp.zeros((2, 4), jnp.int4))
    with pytest.raises(TypeError, match=r"transpose: argument 'x': expected an array"):
        jk.transpose([[1, 2], [3, 4]])


def _raw_call(x, out_shape, out_dtype, perm):
    call = jax.ffi.ffi_call("jk_transpose", jax.ShapeDtypeStruct(out_shape, out_dtype))
    return jax.block_until_ready(call(x, permutation=np.asarray(perm, np.int64)))


BAD_RAW_CALLS = [
    ((3, 2), "float32", (1,), "permutation"),            # wrong length
    ((3, 2), "float32", (1, 1), "permutation"),          # repeated axis
    ((3, 2), "float32", (1, 2), "permutation"),          # out of range
    ((3, 2), "float32", (-1, 0), "permutation"),         # negative (Python normalises first)
    ((2, 3), "float32", (1, 0), "'y': expected shape"),  # output not permuted
    ((3, 2), "int32", (1, 0), "'y': expected dtype"),    # dtype changes
]


@pytest.mark.skipif(ON_GPU, reason="on GPU: test_handler_validation_isolated (a crash must not end the suite)")
@pytest.mark.parametrize("out_shape, out_dtype, perm, match", BAD_RAW_CALLS)
def test_handler_validation(out_shape, out_dtype, perm, match):
    x = jnp.ones((2, 3), jnp.float32)
    with pytest.raises(Exception, match=match):
        _raw_call(x, out_shape, out_dtype, perm)


_ISOLATED = """
import sys, numpy as np, jax, jax.numpy as jnp, jax_kernels
x = jnp.ones((2, 3), jnp.float32)
for shape, dt, perm, match in {cases!r}:
    call = jax.ffi.ffi_call("jk_transpose", jax.ShapeDtypeStruct(shape, jnp.dtype(dt)))
    try:
        jax.block_until_ready(call(x, permutation=np.asarray(perm, np.int64)))
    except Exception as e:
        assert match in str(e), str(e)
    else:
        sys.exit(f"no error for {{perm}}")
# The process is still healthy after the rejected calls.
y = jax_kernels.transpose(jnp.arange(6.0).reshape(2, 3))
assert np.array_equal(np.asarray(y), np.arange(6.0).reshape(2, 3).T)
print("OK")
"""


@pytest.mark.skipif(not ON_GPU, reason="CPU runs test_handler_validation in-process")
def test_handler_validation_isolated():
    # Every rejected raw call raises, and later executions still work, in a child process so that a
    # crash (seen once with the command-buffer trait declared) fails this test instead of the suite.
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", _ISOLATED.format(cases=BAD_RAW_CALLS)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "OK" in r.stdout, (r.returncode, r.stdout[-2000:], r.stderr[-4000:])


def test_handler_accepts_valid_raw_call(rng):
    x, xn = make(rng, (5, 7), jnp.float32)
    np.testing.assert_array_equal(np.asarray(_raw_call(x, (7, 5), jnp.float32, (1, 0))), xn.T)


@pytest.mark.skipif(not ON_GPU, reason="GPU dispatch boundary (a CPU run would only repeat the 2D cases)")
def test_int8_wide_tile_boundary(rng):
    # Large 1-byte transposes with >= 16 256x256 tiles per SM take the 256x256-byte tile (64 KB of dynamic
    # shared memory), fewer keep 128x128 in the compact flavour (transpose_launch.cu, kWideTileWaves):
    # 8192^2 has 1024 tiles, (12304, 12320) 2401 with ragged last tiles on both sides (132-SM H200: the
    # line is 2112). Sampled rows and columns of y cross every tile along their axis.
    for shape in [(8192, 8192), (12304, 12320)]:
        xn = np.frombuffer(rng.bytes(shape[0] * shape[1]), np.int8).reshape(shape)
        y = jk.transpose(jnp.asarray(xn))
        assert y.shape == shape[::-1]
        r = np.array([0, 1, 255, 256, shape[1] // 2, shape[1] - 17, shape[1] - 1])
        c = np.array([0, 1, 255, 256, shape[0] // 2, shape[0] - 17, shape[0] - 1])
        np.testing.assert_array_equal(np.asarray(y[r, :]), xn[:, r].T)
        np.testing.assert_array_equal(np.asarray(y[:, c]), xn[c, :].T)


@pytest.mark.skipif(not ON_GPU, reason="GPU dispatch tiers (on CPU these sizes only repeat the 2D cases, slowly)")
@pytest.mark.parametrize("shape, dtype", [
    ((2056, 2072), jnp.int8),         # 8-byte accesses, compact flavour, 128x128 tiles of several waves
    ((12312, 12300), jnp.int8),       # 4-byte accesses on the 256x256 tile (general flavour), ragged edges
    ((8193, 8191), jnp.int8),         # padded element-access tiles (64x68), compact flavour past 32 MiB
    ((4100, 4100), jnp.bfloat16),     # 8-byte accesses, general flavour (past 32 MiB)
    ((4099, 4101), jnp.bfloat16),     # padded element-access tiles (64x66), general flavour
    ((50257, 768), jnp.bfloat16),     # padded tiles, x's rows in 16-byte vectors, general flavour
    ((768, 50257), jnp.bfloat16),     # padded tiles, y's rows in 16-byte vectors
    ((1001, 4096), jnp.int8),         # padded tiles, x's rows in 16-byte vectors, compact flavour
    ((4098, 2050), jnp.bfloat16),     # 4-byte accesses, general flavour
    ((1026, 1030), jnp.bfloat16),     # 4-byte accesses, compact flavour
], ids=str)
def test_ragged_access_tiers(rng, shape, dtype):
    # Session 37: 1- and 2-byte sides that are not multiples of 16 bytes keep the swizzled tiles with 8- or 4-byte
    # global accesses where those fit (LaunchTiled). Random bits; sampled rows and columns of y cross every tile along
    # their axis.
    e = np.dtype(dtype).itemsize
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32}[e]
    xn = np.frombuffer(rng.bytes(shape[0] * shape[1] * e), bits).reshape(shape)
    y = jax.jit(lambda t: jk.transpose(t))(jnp.asarray(xn.view(dtype)))
    assert y.shape == shape[::-1]
    r = np.array([0, 1, 127, 128, 255, 256, shape[1] // 2, shape[1] - 17, shape[1] - 1])
    c = np.array([0, 1, 127, 128, 255, 256, shape[0] // 2, shape[0] - 17, shape[0] - 1])
    np.testing.assert_array_equal(np.asarray(y[r, :]).view(bits), xn[:, r].T)
    np.testing.assert_array_equal(np.asarray(y[:, c]).view(bits), xn[c, :].T)


# ---- GPU-only sizes (marked large: the full GPU run sets JK_LARGE_TESTS=1) ----------------------------


def _pattern(shape, dtype):
    i = jax.lax.broadcasted_iota(jnp.int32, shape, 0)
    j = jax.lax.broadcasted_iota(jnp.int32, shape, 1)
    return ((i * 7 + j * 13) % 251).astype(dtype)


@pytest.mark.large
@pytest.mark.parametrize("shape, dtype", [
    ((49152, 49152), jnp.int8),     # 2.4e9 elements: flat indices past 2^31 (general flavour)
    # Around the compact flavour's 32-bit guard (2^31 bytes; the default dispatch sends these to the
    # general flavour since the 32 MiB line, JK_TRANSPOSE_TIERS=compact runs them compact):
    ((46340, 46340), jnp.int8),     # 2^31 - 88047 bytes, 4-byte accesses
    ((46341, 46341), jnp.int8),     # 2^31 + 4633 bytes, element accesses
    ((32764, 16384), jnp.float32),  # 2^31 - 262144 bytes, 16-byte kernel, offsets near 2^31
    ((32768, 32768), jnp.bfloat16),  # exactly 2^31 bytes, 16-byte kernel
], ids=str)
def test_large_2d_around_2_31(shape, dtype):
    x = _pattern(shape, dtype)
    y = jk.transpose(x)
    n0, n1 = shape
    rows = np.array([0, 1, 12345, n1 - 2, n1 - 1])
    got = np.asarray(y[rows, :]).astype(np.int64)  # y[r, c] = x[c, r]
    c = np.arange(n0)
    expected = (c[None, :] * 7 + rows[:, None] * 13) % 251
    np.testing.assert_array_equal(got, np.asarray(expected.astype(np.dtype(dtype))).astype(np.int64))


@pytest.mark.large
def test_large_float32_3gib_batched_swap():
    b, n = 3, 16384  # 3 GiB: byte offsets past 2^32
    x = jax.random.normal(jax.random.key(0), (b, n, n), jnp.float32)
    y = jk.transpose(x, (0, 2, 1))
    for k, r in [(0, 0), (1, 777), (2, n - 1)]:
        np.testing.assert_array_equal(np.asarray(y[k, r, :]), np.asarray(x[k, :, r]))


# Rows a multiple of 1 KB apart (the CPU handler's buffered 16 x 16 tiles: such rows share L1 sets) and odd strides,
# ragged tile edges on either side, a batched swap.
STRIDE_CASES = [((257, 1024), (1, 0)), ((1000, 512), (1, 0)), ((3, 256, 1024), (0, 2, 1)), ((1024, 257), (1, 0))]


@pytest.mark.parametrize("dtype", FLAVOUR_DTYPES, ids=lambda d: np.dtype(d).name)
def test_power_of_two_row_strides(rng, dtype):
    with jax.enable_x64(dtype == jnp.float64):
        check_cases_jitted(rng, dtype, STRIDE_CASES)
