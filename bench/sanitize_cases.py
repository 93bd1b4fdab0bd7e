"""Every op across every CUDA dispatch tier, in one process, for the sanitizer tools that cannot take the
whole test suite (bench/sanitize.sh runs initcheck and synccheck on this).

initcheck tracks initialisation only through the kernels it instruments (ours: the filter keeps XLA's
out), so every input here arrives by a host-to-device copy (jax.device_put), never from an XLA kernel such
as a slice, and results are compared on the host against float64 NumPy. Shapes cross each tier boundary of
the launchers (row lengths 1..65537, strided axes, transpose tiles and permutations, matmul tiles and
epilogues); misaligned views are left to memcheck over the test suite.

    python bench/sanitize_cases.py        exits non-zero if any result is wrong
"""
from __future__ import annotations

import importlib
import math
import os
import sys

# The norms' lab tier knob (JK_NORM_TIER) re-read at every launch, so the windows part can force packed
# configurations of the short-row tier between calls (unset it changes nothing).
os.environ.setdefault("JK_NORM_TIER_DYNAMIC", "1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jax_kernels as jk  # noqa: E402

norms = importlib.import_module("jax_kernels.norms")      # the package's `softmax` is the function
softmax_mod = importlib.import_module("jax_kernels.softmax")

RNG = np.random.default_rng(0)
DTYPES = [jnp.float32, jnp.bfloat16, jnp.float16]
TOL = {jnp.float32: 2e-3, jnp.bfloat16: 5e-2, jnp.float16: 1e-2}  # loose: this checks that work happened
failures: list[str] = []
count = 0


def put(shape, dtype, scale=1.0, offset=0.0):
    host = (offset + scale * RNG.standard_normal(shape)).astype(np.dtype(dtype))  # converted on the host
    x = jax.device_put(host)
    return x, np.asarray(x, np.float64)


def check(name, got, want, tol):
    global count
    count += 1
    got = np.asarray(got, np.float64)
    err = np.max(np.abs(got - want) / (1.0 + np.abs(want))) if want.size else 0.0
    if got.shape != want.shape or not err <= tol:
        failures.append(f"{name}: shape {got.shape} vs {want.shape}, err {err:.3g}")


def np_layer_norm(x, s, b, axis):
    m = x.mean(axis, keepdims=True)
    v = ((x - m) ** 2).mean(axis, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * s + b


def np_rms_norm(x, s, axis):
    return x / np.sqrt((x * x).mean(axis, keepdims=True) + 1e-6) * s


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def row_ops(rows, n, dt):
    """LayerNorm, RMSNorm, softmax and log-softmax over (rows, n) rows of dtype dt."""
    x, xf = put((rows, n), dt)
    s, sf = put((n,), dt, 0.1, 1.0)
    b, bf = put((n,), dt, 0.1)
    check(f"layer_norm {n} {dt.__name__}", jk.layer_norm(x, s, b), np_layer_norm(xf, sf, bf, -1), TOL[dt] * 4)
    check(f"rms_norm {n} {dt.__name__}", jk.rms_norm(x, s), np_rms_norm(xf, sf, -1), TOL[dt] * 4)
    check(f"softmax {n} {dt.__name__}", jk.softmax(x), np_softmax(xf, -1), TOL[dt])
    check(f"log_softmax {n} {dt.__name__}", jk.log_softmax(x), np.log(np_softmax(xf, -1)), TOL[dt] * 8)


def norms_and_softmax():
    # Row lengths across the group / block / two-read tiers (vector and scalar paths).
    for n in [1, 3, 32, 33, 128, 1025, 2048, 4097, 8192, 16384, 16385, 65537]:
        for dt in DTYPES:
            row_ops(300 if n in (8192, 16384) else 3 if n > 4096 else 37, n, dt)  # 300: the bulk tier's ring wraps
    # The packed short-row tier without parameters: 16-bit rows read the device rows of ones / zeros.
    for n in [32, 128, 256, 1024]:
        for dt in DTYPES:
            x, xf = put((37, n), dt)
            check(f"layer_norm {n} {dt.__name__} no params", jk.layer_norm(x), np_layer_norm(xf, 1.0, 0.0, -1), TOL[dt] * 4)
            check(f"rms_norm {n} {dt.__name__} no scale", jk.rms_norm(x), np_rms_norm(xf, 1.0, -1), TOL[dt] * 4)
            # The statistics outputs (float32 32 and float16 128 take R = 2 rows a lane group: 37 rows leave the
            # last warp's second group partly past the end).
            _, mean, rstd = jk.layer_norm(x, return_stats=True)
            check(f"layer_norm {n} {dt.__name__} mean", mean, xf.mean(-1), TOL[dt])
            check(f"layer_norm {n} {dt.__name__} rstd", rstd, 1.0 / np.sqrt(xf.var(-1) + 1e-5), TOL[dt] * 4)
    # A non-last axis with 16-byte packs of inner columns.
    for dt in DTYPES:
        x, xf = put((4, 512, 64), dt)
        check(f"layer_norm axis=1 packs {dt.__name__}", jk.layer_norm(x, axis=1), np_layer_norm(xf, 1.0, 0.0, 1), TOL[dt] * 4)
        check(f"rms_norm axis=1 packs {dt.__name__}", jk.rms_norm(x, axis=1), np_rms_norm(xf, 1.0, 1), TOL[dt] * 4)
        check(f"softmax axis=1 packs {dt.__name__}", jk.softmax(x, axis=1), np_softmax(xf, 1), TOL[dt])
    # A long non-last axis: the split-axis tiers (session 30: chunk statistics in the lowering's workspace), with
    # columns of 4, 8 and 16 packs, a last chunk of one row and partial tiles (inner 40).
    for dt in DTYPES:
        for shape in ((2, 4097, 8), (1, 8193, 128), (3, 5000, 40)):
            x, xf = put(shape, dt)
            name = f"{'x'.join(map(str, shape))} {dt.__name__}"
            y, mean, _ = jk.layer_norm(x, axis=1, return_stats=True)
            check(f"layer_norm axis=1 split {name}", y, np_layer_norm(xf, 1.0, 0.0, 1), TOL[dt] * 4)
            check(f"layer_norm axis=1 split mean {name}", mean, xf.mean(1), TOL[dt])
            check(f"rms_norm axis=1 split {name}", jk.rms_norm(x, axis=1), np_rms_norm(xf, 1.0, 1), TOL[dt] * 4)
            check(f"softmax axis=1 split {name}", jk.softmax(x, axis=1), np_softmax(xf, 1), TOL[dt])
    # A non-last axis (the strided tiers), statistics-only and apply entry points, masks.
    for dt in DTYPES:
        x, xf = put((4, 1025, 33), dt)
        check("layer_norm axis=1", jk.layer_norm(x, axis=1), np_layer_norm(xf, 1.0, 0.0, 1), TOL[dt] * 4)
        check("rms_norm axis=1", jk.rms_norm(x, axis=1), np_rms_norm(xf, 1.0, 1), TOL[dt] * 4)
        check("softmax axis=1", jk.softmax(x, axis=1), np_softmax(xf, 1), TOL[dt])
        mean, m2 = norms.layer_norm_stats(x)
        check("layer_norm_stats", mean, xf.mean(-1), TOL[dt])
        check("layer_norm_stats m2", m2, ((xf - xf.mean(-1, keepdims=True)) ** 2).sum(-1), TOL[dt] * 4)
        mx, sm = softmax_mod.softmax_stats(x)
        check("softmax_stats max", mx, xf.max(-1), TOL[dt])
        check("softmax_stats sum", sm, np.exp(xf - xf.max(-1, keepdims=True)).sum(-1), TOL[dt] * 4)
        mask_host = RNG.random((4, 1025, 33)) < 0.7
        mask_host[..., 0] = True
        mask = jax.device_put(mask_host)
        want = np.where(mask_host, np.exp(xf - np.where(mask_host, xf, -np.inf).max(-1, keepdims=True)), 0.0)
        check("softmax where=", jk.softmax(x, where=mask), want / want.sum(-1, keepdims=True), TOL[dt])


def long_rows():
    # Session-4 tiers: 16-bit rows packed in registers (1024: 32 elements per thread; 32768: 64), the long-row
    # ring (float32 32768: one CTA per row; 65536: float32 over a 2-4-CTA cluster, 16-bit one CTA) with more
    # rows than ring CTAs, so every CTA's ring wraps.
    # Session 12: float32 rows of 40004 on the hybrid kernels (softmax, RMSNorm: registers + cp.async-staged
    # shared memory, the last packs partly past the row).
    # Session 32: the row-pairs form (norm_cluster_pairs.cuh, two row streams per CTA): float32 32768-131072 and 40004,
    # 16-bit 65536 (kFull for bfloat16), 16-bit RMSNorm at 40000 (a padded last rank; LayerNorm keeps the cluster tier),
    # float32 LayerNorm at 7000 and 8192 (one CTA, 4 packs a thread).
    for n, dts, rows in [(1024, DTYPES[1:], 37), (32768, DTYPES, 140), (65536, DTYPES, 140), (40004, DTYPES[:1], 140),
                         (40000, DTYPES[1:], 37), (131072, DTYPES[:1], 13), (7000, DTYPES[:1], 37),
                         (8192, DTYPES[:1], 37)]:
        for dt in dts:
            row_ops(rows, n, dt)


def windows():
    # Session 33: the window tiers of session 32 (rows of n % P != 0 over aligned x and y: the norms' window of
    # 16-byte packs in registers, a warp per row up to 256 packs, a CTA up to 4096; softmax's window past 1024
    # columns) with rows that start at every alignment, and a long softmax row on the CTA form; then the packed
    # short-row tier's rows of 6 and 12 packs (16-bit 48 / 96, float32 24 / 48: new this session) and float32 96
    # with 3 packs a lane and 2 rows a group, forced through JK_NORM_TIER and in the default dispatch.
    # Session 34: 2051 and 3075 columns, where the rule takes 5 packs a thread (bfloat16 2051, float32 3075); 6 at
    # 4099 (both) and float32 2035.
    # Session 35: 16-bit rows past 1024 packs take 6 packs a thread where as many rows fit an SM as with 8: 20483 (427
    # threads), 40963 (854) and 49145 (1024, the most).
    for n, rows in [(1001, 37), (2035, 37), (2051, 37), (3075, 13), (4099, 13), (16381, 5), (50257, 3), (20483, 3),
                    (40963, 3), (49145, 3)]:
        for dt in DTYPES:
            row_ops(rows, n, dt)
    for n in [24, 48, 96]:
        for dt in DTYPES:
            row_ops(37, n, dt)
            for tier in ["packed 3 1", "packed 3 2", "packed 6 1"]:
                os.environ["JK_NORM_TIER"] = tier
                try:
                    x, xf = put((37, n), dt)
                    s, sf = put((n,), dt, 0.1, 1.0)
                    b, bf = put((n,), dt, 0.1)
                    check(f"layer_norm {n} {dt.__name__} {tier}", jk.layer_norm(x, s, b),
                          np_layer_norm(xf, sf, bf, -1), TOL[dt] * 4)
                    check(f"rms_norm {n} {dt.__name__} {tier}", jk.rms_norm(x, s), np_rms_norm(xf, sf, -1),
                          TOL[dt] * 4)
                finally:
                    os.environ.pop("JK_NORM_TIER", None)


def transposes():
    for dt in [jnp.float32, jnp.bfloat16, jnp.int8]:
        for shape, perm in [((1, 1), (1, 0)), ((33, 65), (1, 0)), ((1025, 4097), (1, 0)),
                            ((3, 67, 129), (0, 2, 1)), ((5, 7, 9, 11), (2, 0, 3, 1)),
                            ((2, 64, 12, 64), (0, 2, 1, 3)), ((17, 3, 1029), (2, 1, 0)),
                            # Session 28: the tiers added since the part was written. The single-wave small tiles
                            # (2048x512), the grouped 5-D permutation (split A), and the short-side tier
                            # (kTiledNarrow: NHWC -> NCHW, its reverse with a ragged tile, no batch axis).
                            ((2048, 512), (1, 0)), ((8, 16, 32, 64, 2), (4, 0, 3, 1, 2)),
                            ((8, 128, 128, 3), (0, 3, 1, 2)), ((4, 3, 104, 250), (0, 2, 3, 1)),
                            ((70001, 7), (1, 0)),
                            # Session 37: ragged sides on the swizzled tiles with 8- or 4-byte accesses (1- and 2-byte
                            # elements), single-wave and several-wave tiles, a batch axis.
                            ((1000, 1000), (1, 0)), ((34, 66), (1, 0)), ((3, 520, 264), (0, 2, 1)),
                            ((1026, 1030), (1, 0)),
                            # one side 16-byte aligned, the other odd (1- and 2-byte: the padded tiles with a 16-byte
                            # side, kVecIn / kVecOut), with ragged edge tiles and a batch axis
                            ((201, 1040), (1, 0)), ((1040, 201), (1, 0)), ((3, 67, 144), (0, 2, 1)),
                            # Session 38: 2-D problems run the compact tiles on a grid of tiles (CompactTile):
                            # several waves of big tiles with ragged edges, the register blocks, padded tiles.
                            ((2050, 2100), (1, 0)), ((4096, 1024), (1, 0)),
                            # Session 39: small 2-D 4-byte problems with sides multiple of 32 on the lean 32x33 tile
                            # (kTiledPaddedLean; 2048x512 above takes it too).
                            ((96, 160), (1, 0)), ((32, 4096), (1, 0))]:
            if dt == jnp.int8:
                host = RNG.integers(-100, 100, shape).astype(np.int8)
            else:
                host = RNG.standard_normal(shape).astype(np.dtype(dt))
            x = jax.device_put(host)
            check(f"transpose {shape} {perm} {np.dtype(dt).name}", jk.transpose(x, perm),
                  np.transpose(np.asarray(x, np.float64), perm), 0.0)
    # The int8 256x256-byte tile: only from 16 of its tiles per SM (12288^2 = 2304 tiles >= 16 x 132 SMs).
    host = RNG.integers(-100, 100, (12288, 12288)).astype(np.int8)
    check("transpose int8 12288x12288 wide tile", jk.transpose(jax.device_put(host), (1, 0)), host.T, 0.0)
    # int8 past 32 MiB below the wide tile's threshold: the 128x128 tile's compact flavour.
    host = RNG.integers(-100, 100, (6000, 6000)).astype(np.int8)
    check("transpose int8 6000x6000 compact", jk.transpose(jax.device_put(host), (1, 0)), host.T, 0.0)
    # Session 37, ragged: the 256x256 tile at 4-byte accesses, the compact 128x128 tile past 32 MiB at 4-byte accesses
    # with a batch axis, bfloat16's general flavour at 8-byte accesses.
    host = RNG.integers(-100, 100, (12312, 12300)).astype(np.int8)
    check("transpose int8 12312x12300 wide tile, 4-byte", jk.transpose(jax.device_put(host), (1, 0)), host.T, 0.0)
    host = RNG.integers(-100, 100, (3, 4104, 4100)).astype(np.int8)
    check("transpose int8 (3, 4104, 4100) (0, 2, 1) compact, 4-byte", jk.transpose(jax.device_put(host), (0, 2, 1)),
          np.transpose(host, (0, 2, 1)), 0.0)
    host = RNG.standard_normal((5003, 768)).astype(np.dtype(jnp.bfloat16))  # a 16-byte side, general flavour
    check("transpose bfloat16 (5003, 768) padded, x's rows in vectors", jk.transpose(jax.device_put(host), (1, 0)),
          host.T.astype(np.float64), 0.0)
    host = RNG.standard_normal((4100, 4100)).astype(np.dtype(jnp.bfloat16))
    check("transpose bfloat16 4100x4100 general, 8-byte", jk.transpose(jax.device_put(host), (1, 0)),
          host.T.astype(np.float64), 0.0)


def row_copies(cases, tier_settings):
    """Each (shape, dtype, perm) of `cases` under each JK_TRANSPOSE_TIERS setting (re-read at every launch), exact."""
    for tiers in tier_settings:
        os.environ["JK_TRANSPOSE_TIERS"] = tiers
        try:
            for shape, dt, perm in cases:
                if dt == jnp.int8:
                    host = RNG.integers(-100, 100, shape).astype(np.int8)
                elif dt == jnp.complex64:
                    host = (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)
                else:
                    host = RNG.standard_normal(shape).astype(np.dtype(dt))
                got = np.asarray(jk.transpose(jax.device_put(host), perm))
                want = np.ascontiguousarray(np.transpose(host, perm))
                if dt == jnp.complex64:  # compared as (real, imaginary) float32 pairs
                    got, want = got.view(np.float32), want.view(np.float32)
                check(f"transpose {shape} {perm} {np.dtype(dt).name} tiers={tiers!r}", got,
                      want.astype(np.float64), 0.0)
        finally:
            os.environ.pop("JK_TRANSPOSE_TIERS", None)


def short_runs():
    # Session 33: row copies of short runs (the last axis kept): 16 and 32 bytes take the tiled row copy staged in
    # shared memory (transpose_rowtile_kernels.cuh) by default (128 bytes too before session 35), 64-256 bytes the
    # input-order copy (lean since session 36; 128 and 256 bytes walked the output in session 35); odd row axes leave
    # partial tiles, batch axes in two positions, and the lab tokens' other tile sizes.
    row_copies([((33, 1025, 4), jnp.float32, (1, 0, 2)), ((130, 70, 8), jnp.float32, (1, 0, 2)),
                ((37, 45, 16), jnp.bfloat16, (1, 0, 2)), ((3, 45, 37, 64), jnp.bfloat16, (0, 2, 1, 3)),
                ((5, 33, 3, 16), jnp.float32, (2, 1, 0, 3)), ((9, 17, 32), jnp.int8, (1, 0, 2)),
                ((2, 70, 40, 2), jnp.complex64, (0, 2, 1, 3))],
               ["", "rowtile4k", "rowtile16k", "rowtile8k,rowtilea"])
    # Session 35: runs of 128 bytes and more take the output-order 16-byte row copy in its lean form (one access a
    # thread, precomputed divisors, at most 4 row axes; five fall back to RowCopy's 128 x 1 form; "rcslow" its
    # division instructions, "rc256x2" session 34's shape, "rclean0" RowCopy's form throughout).
    row_copies([((5, 7, 80), jnp.float32, (1, 0, 2)), ((3, 33, 1032), jnp.bfloat16, (1, 0, 2)),
                ((2, 3, 4, 5, 6, 72), jnp.float32, (4, 3, 2, 1, 0, 5)), ((7, 9, 11, 272), jnp.int8, (2, 0, 1, 3))],
               ["", "rcslow", "rc256x2", "rclean0"])
    # Session 36: runs of up to 256 bytes walk the input on the lean form (the fifth case has 5 row axes: RowCopy's
    # 256 x 2 input-order form); "rclean0" RowCopy's forms throughout, "rcinlean" input order for the 320-byte runs.
    row_copies([((4, 6, 5, 16), jnp.float32, (2, 0, 1, 3)), ((3, 5, 7, 64), jnp.bfloat16, (1, 0, 2, 3)),
                ((9, 13, 64), jnp.float32, (1, 0, 2)), ((5, 7, 80), jnp.float32, (1, 0, 2)),
                ((2, 3, 4, 5, 6, 16), jnp.float32, (4, 3, 2, 1, 0, 5)), ((6, 5, 3, 96), jnp.int8, (1, 2, 0, 3))],
               ["", "rclean0", "rcinlean"])


def matmuls():
    for dt in DTYPES:
        # SIMT/skinny (M <= 8), mma.sync (register-staged for odd K/N), wgmma (>= 64 tiles, K >= 256), K = 0.
        for m, k, n in [(1, 64, 64), (8, 256, 1024), (8, 1024, 4096), (33, 65, 129), (128, 128, 128),
                        (257, 520, 391), (512, 1024, 768), (768, 768, 768), (1024, 1032, 1032), (2048, 256, 1024),
                        (3, 0, 5)]:  # 768^3: wgmma split-K over a cluster of 2 (32-63 tiles, K >= 768)
            a, af = put((m, k), dt)
            b, bf = put((k, n), dt, 1.0 / np.sqrt(max(k, 1)))
            check(f"matmul {m}x{k}x{n} {dt.__name__}", jk.matmul(a, b), af @ bf, TOL[dt] * 4)
            if dt == jnp.float32:
                check(f"matmul highest {m}x{k}x{n}", jk.matmul(a, b, precision="highest"), af @ bf, 1e-4)
        # Exact float32 split-K over a cluster (session 16): 512x256x512 in pairs with two k groups a CTA; since
        # session 22, 256^3 and 128x1024x128 (and 128^3 above) run SimtRing (64-thread CTAs, a cp.async ring).
        if dt == jnp.float32:
            for m, k, n in [(512, 256, 512), (256, 256, 256), (128, 1024, 128)]:
                a, af = put((m, k), dt)
                b, bf = put((k, n), dt, 1.0 / np.sqrt(k))
                check(f"matmul highest split {m}x{k}x{n}", jk.matmul(a, b, precision="highest"), af @ bf, 1e-4)
        # SkinnyPipe (bf16/f16, 2 <= M <= 16): M = 16 and M = 2; then its TMA form (session 15): b past the L2
        # cache (8192 x 4104: 67 MB, the default takes TMA there), and forced at a small shape with a K tail.
        for m, k, n, tma in [(16, 512, 1024, None), (2, 2048, 512, None), (12, 8192, 4104, None),
                             (9, 1000, 520, "1")]:
            if dt == jnp.float32 and k * n > (1 << 22):
                continue  # float32 takes other tiers: no need for the large b there
            a, af = put((m, k), dt)
            b, bf = put((k, n), dt, 1.0 / np.sqrt(k))
            if tma:
                os.environ["JK_MATMUL_PIPE_TMA"] = tma
            try:
                check(f"matmul {m}x{k}x{n} {dt.__name__}{' tma' if tma else ''}", jk.matmul(a, b), af @ bf,
                      TOL[dt] * 4)
            finally:
                os.environ.pop("JK_MATMUL_PIPE_TMA", None)
        # SplitPipe (session 24; the default for the decode shapes above that split K into >= 2 ranks): M = 1, a
        # batched decode with an N tail, a linear epilogue in its sum kernel; and SkinnyPipe (the cluster form) forced.
        if dt != jnp.float32:
            for a_shape, b_shape, env in [((1, 4104), (4104, 1032), None), ((3, 8, 1024), (3, 1024, 520), None),
                                          ((6, 1032), (1032, 200), None), ((8, 1024), (1024, 4096), "cluster"),
                                          ((16, 520), (520, 264), "cluster")]:
                a, af = put(a_shape, dt)
                b, bf = put(b_shape, dt, 1.0 / np.sqrt(b_shape[-2]))
                name = f"{a_shape}x{b_shape} {dt.__name__} {env or 'split'}"
                if env:
                    os.environ["JK_MATMUL_DECODE"] = env
                try:
                    check(f"matmul decode {name}", jk.matmul(a, b), np.matmul(af, bf), TOL[dt] * 4)
                    if a_shape == (6, 1032):  # the sum kernel's epilogue
                        bias, biasf = put(b_shape[-1:], dt)
                        res, resf = put(a_shape[:1] + b_shape[-1:], dt)
                        got = jk.linear(a, b, bias, activation="relu", residual=res)
                        check(f"linear decode relu+residual {name}", got, np.maximum(af @ bf + biasf, 0.0) + resf,
                              TOL[dt] * 4)
                finally:
                    os.environ.pop("JK_MATMUL_DECODE", None)
        # Multicast pairs (session 20), by default: 128x256 tiles sharing b (N % 16 == 8), 128x64 tiles sharing a
        # (K % 16 == 8: since session 27 1000x1000x1000 takes the swapped-role kernel instead, below).
        if dt != jnp.float32:
            for m, k, n in [(1024, 512, 2056), (1000, 1000, 1000)]:
                a, af = put((m, k), dt)
                b, bf = put((k, n), dt, 1.0 / np.sqrt(k))
                check(f"matmul pairs {m}x{k}x{n} {dt.__name__}", jk.matmul(a, b), af @ bf, TOL[dt] * 4)
        # The swapped-role kernel (session 27: clusters of 4 sharing a's rows by multicast), by default at 1000^3
        # above; forced (JK_MATMUL_WGMMA_SWAP=1) over more clusters than fit at once (1024x1000x1024: 32 clusters of
        # 4, a persistent second round) and on a cut tile (145 rows: a second M-tile of one row).
        if dt != jnp.float32:
            os.environ["JK_MATMUL_WGMMA_SWAP"] = "1"
            try:
                for m, k, n in [(1024, 1000, 1024), (145, 72, 1000)]:
                    a, af = put((m, k), dt)
                    b, bf = put((k, n), dt, 1.0 / np.sqrt(k))
                    check(f"matmul swap {m}x{k}x{n} {dt.__name__}", jk.matmul(a, b), af @ bf, TOL[dt] * 4)
            finally:
                os.environ.pop("JK_MATMUL_WGMMA_SWAP", None)
        # the second: wgmma's epilogue; the third: its ping-pong schedule (>= 2 x SMs tiles of 128x128), then
        # (session 20) the cooperative 128x256 pairs sharing b (4096 x 2048; since session 21 the 128x256 tiles alone
        # there, N % 16 == 0, with the unrolled epilogues) and the ping-pong pairs (N = 2056)
        for shape, kk, nn in [((3, 130), 96, 200), ((4, 512), 512, 1024), ((2304,), 256, 2048), ((4096,), 256, 2048),
                              ((2304,), 256, 2056)]:
            a, af = put(shape + (kk,), dt)
            w, wf = put((kk, nn), dt, 1.0 / np.sqrt(kk))
            bias, biasf = put((nn,), dt)
            res, resf = put(shape + (nn,), dt)
            want = np.maximum(af @ wf + biasf, 0.0) + resf
            check(f"linear relu+residual {shape} {dt.__name__}",
                  jk.linear(a, w, bias, activation="relu", residual=res), want, TOL[dt] * 4)
            z = (af @ wf + biasf).reshape(-1, nn)[:64]  # exact gelu, first 64 rows (math.erf per element)
            gelu = z * 0.5 * (1.0 + np.vectorize(math.erf)(z / math.sqrt(2.0)))
            got = jk.linear(a, w, bias, activation="gelu", residual=res)
            check(f"linear gelu+residual {shape} {dt.__name__}", np.asarray(got, np.float64).reshape(-1, nn)[:64],
                  gelu + resf.reshape(-1, nn)[:64], TOL[dt] * 4)
            # without a residual (session 21: the cooperative epilogue's unrolled form at 4096 x 2048)
            got = jk.linear(a, w, bias, activation="gelu")
            check(f"linear gelu {shape} {dt.__name__}", np.asarray(got, np.float64).reshape(-1, nn)[:64], gelu,
                  TOL[dt] * 4)


def one_pack_rows():
    """Sessions 39-42: the one-pack lanes (norm_short_onepack.cuh: whole CTAs, a ragged grid's last one moved back over
    its neighbour's rows and storing only its own): bf16/f16 rows of 32 columns and float32 16 (CTAs of 64 rows),
    float32 32 and 64 and bf16/f16 64 (32 rows; float32 16 / 64 and 16-bit 64 since session 42), bf16/f16 LayerNorm
    128 (128 rows, whole grids only) and RMSNorm 128 (held words, ragged grids too); row counts below a CTA, on its
    edge, one past it, ragged; with and without parameters, with statistics."""
    cases = [(dt, 32, rows) for dt in (jnp.float32, jnp.bfloat16, jnp.float16) for rows in (1, 31, 64, 65, 97, 1025)]
    cases += [(jnp.float32, 32, rows) for rows in (32, 33, 47)]
    cases += [(dt, 64, rows) for dt in (jnp.float32, jnp.bfloat16, jnp.float16) for rows in (31, 32, 33, 97)]
    cases += [(jnp.float32, 16, rows) for rows in (63, 64, 65, 1025)]  # session 42: float32 16 / 64, 16-bit 64
    cases += [(dt, 128, rows) for dt in (jnp.bfloat16, jnp.float16) for rows in (17, 128, 129, 256, 1001)]
    for dt, n, rows in cases:
        row_ops(rows, n, dt)
        x, xf = put((rows, n), dt)
        check(f"layer_norm {n} x {rows} {dt.__name__} no params", jk.layer_norm(x), np_layer_norm(xf, 1.0, 0.0, -1),
              TOL[dt] * 4)
        check(f"rms_norm {n} x {rows} {dt.__name__} no scale", jk.rms_norm(x), np_rms_norm(xf, 1.0, -1), TOL[dt] * 4)
        _, mean, _ = jk.layer_norm(x, return_stats=True)
        check(f"layer_norm {n} x {rows} {dt.__name__} mean", mean, xf.mean(-1), TOL[dt])


def main() -> int:
    print("device:", jax.devices()[0], "cuda build:", jk.WITH_CUDA)
    parts = (norms_and_softmax, one_pack_rows, long_rows, windows, transposes, short_runs, matmuls)
    # JK_SANITIZE_PARTS=long_rows,matmuls: only those parts (a quick re-check of one tier under one tool).
    only = [p for p in os.environ.get("JK_SANITIZE_PARTS", "").split(",") if p]
    unknown = set(only) - {p.__name__ for p in parts}
    if unknown:
        raise SystemExit(f"JK_SANITIZE_PARTS: unknown part(s) {sorted(unknown)}")
    for part in parts:
        if only and part.__name__ not in only:
            continue
        part()
        print(f"{part.__name__}: {count} cases so far, {len(failures)} wrong", flush=True)
    print(f"{count} cases, {len(failures)} wrong")
    for f in failures[:20]:
        print("WRONG", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
