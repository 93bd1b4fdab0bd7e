"""Runs cases: generates inputs, times ours and the jnp baseline back to back, checks they agree.

A failure in one case (an op raising, an out-of-memory, a compile error) is recorded in that case's
rows and the run goes on.
"""
from __future__ import annotations

import math
import sys
import time
import traceback
import zlib
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from .cases import DTYPES, Case, Input
from .timing import Timer

IMPLS = ("jax_kernels", "jnp")


class Progress:
    """A one-line progress bar on stderr (redrawn in place on a terminal, a line per 10% otherwise)."""

    def __init__(self, total: int, enabled: bool = True, width: int = 28):
        self.total, self.enabled, self.width = max(total, 1), enabled, width
        self.done, self.start = 0, time.perf_counter()
        self.tty = enabled and sys.stderr.isatty()
        self._last_decile = -1

    def update(self, label: str):
        self.done += 1
        if not self.enabled:
            return
        frac = self.done / self.total
        elapsed = time.perf_counter() - self.start
        eta = elapsed / frac - elapsed if frac > 0 else 0.0
        bar = "#" * int(frac * self.width) + "." * (self.width - int(frac * self.width))
        line = f"[{bar}] {self.done}/{self.total} {elapsed:5.0f}s eta {eta:4.0f}s  {label}"
        if self.tty:
            sys.stderr.write("\r" + line[:120].ljust(120))
            sys.stderr.flush()
        elif int(frac * 10) != self._last_decile or self.done == self.total:
            self._last_decile = int(frac * 10)
            print(line, file=sys.stderr, flush=True)

    def close(self):
        if self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()


class InputCache:
    """Inputs of the current case, reused by the next case when it needs the same tensor.

    Sweep cases of one (shape, dtype) are adjacent, so four ops share one generated 6 GB tensor;
    anything the next case does not use is dropped before its inputs are made (memory stays bounded).
    """

    def __init__(self, seed: int, on_device_rng: bool = True):
        self.seed = seed
        self.on_device_rng = on_device_rng  # GPU: generate on the device (6 GB tensors); CPU: NumPy, no compiles
        self.arrays: dict = {}

    def get(self, inputs: tuple[Input, ...]):
        keys = [i.key for i in inputs]
        self.arrays = {k: v for k, v in self.arrays.items() if k in keys}
        for i in inputs:
            if i.key not in self.arrays:
                # Seeded from the input's description: the same tensor in every run and process.
                salt = zlib.crc32(repr(i.key).encode()) >> 1
                if self.on_device_rng:
                    self.arrays[i.key] = _make(i, jax.random.fold_in(jax.random.key(self.seed), salt))
                else:
                    self.arrays[i.key] = _make_host(i, np.random.default_rng([self.seed, salt]))
        return tuple(self.arrays[k] for k in keys)

    def clear(self):
        self.arrays = {}


def _make(i: Input, key):
    dtype = DTYPES[i.dtype]
    if i.fill == "causal":
        return _causal(i.shape)
    if i.fill == "int":
        return _randint(key, i.shape, dtype)
    return _normal(key, i.shape, dtype)


def _make_host(i: Input, rng):
    dtype = DTYPES[i.dtype]
    if i.fill == "causal":
        return jnp.asarray(np.broadcast_to(np.tri(i.shape[-2], i.shape[-1], dtype=bool), i.shape))
    if i.fill == "int":
        return jnp.asarray(rng.integers(-100, 100, i.shape), dtype)
    return jnp.asarray(rng.standard_normal(i.shape, np.float32), dtype)


@partial(jax.jit, static_argnums=(1, 2))
def _normal(key, shape, dtype):
    return jax.random.normal(key, shape, dtype)


@partial(jax.jit, static_argnums=(1, 2))
def _randint(key, shape, dtype):
    return jax.random.randint(key, shape, -100, 100, dtype)


@partial(jax.jit, static_argnums=(0,))
def _causal(shape):
    rows, cols = shape[-2], shape[-1]
    mask = jnp.arange(cols)[None, :] <= jnp.arange(rows)[:, None]
    return jnp.broadcast_to(mask, shape)


def max_rel_err(a, b) -> float:
    """max |a - b| / max |b| over finite entries (equal infinities, e.g. masked log-softmax, count as 0)."""
    if a.size <= (1 << 22) and jax.default_backend() == "cpu":  # small: NumPy, no compile
        a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
        with np.errstate(invalid="ignore"):
            diff = np.where(a == b, 0.0, np.abs(a - b))
        fin = np.abs(b[np.isfinite(b)])
        scale = max(float(fin.max()) if fin.size else 0.0, float(np.finfo(np.float32).tiny))
        return float(diff.max() / scale) if diff.size else 0.0
    return float(_max_rel_err(a, b))


@jax.jit
def _max_rel_err(a, b):
    a = a.astype(jnp.float32)
    b = b.astype(jnp.float32)
    diff = jnp.where(a == b, 0.0, jnp.abs(a - b))
    scale = jnp.max(jnp.where(jnp.isfinite(b), jnp.abs(b), 0.0))
    return jnp.max(diff) / jnp.maximum(scale, jnp.finfo(jnp.float32).tiny)


def _nbytes(tree) -> int:
    return sum(int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize for x in jax.tree.leaves(tree))


def _error_text(e: BaseException) -> str:
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    msg = lines[0] if lines else ""
    if len(msg) > 300:
        msg = msg[:300] + "..."
    return f"{type(e).__name__}: {msg}"


def _row(case: Case, impl: str, device: str, timer: Timer) -> dict:
    return dict(op=case.op, impl=impl, dtype=case.dtype, shape=list(case.shape), case=case.label,
                group=case.group, params=case.params_json(), tags=list(case.tags),
                sweep_cols=case.sweep_cols, timer=timer.name, time_ms=None, iterations=None,
                time_ms_min=None, time_ms_max=None,
                bytes=None, flops=case.flops or None, gbps=None, tflops=None, frac_ceiling=None,
                ratio=None, max_rel_err=None, l2_warm=None, error=None, device=device)


def run_case(case: Case, index: int, ours, ref, timer: Timer, cache: InputCache, ceiling_gbps: float,
             device: str, debug: bool = False) -> list[dict]:
    rows = {impl: _row(case, impl, device, timer) for impl in IMPLS}
    try:
        args = cache.get(case.inputs)
        out_shape = jax.eval_shape(partial(case.call, ref), *args)
        nbytes = _nbytes(args) + _nbytes(out_shape)
    except Exception as e:  # noqa: BLE001 - recorded, the run goes on
        if debug:
            traceback.print_exc()
        for r in rows.values():
            r["error"] = "inputs: " + _error_text(e)
        return list(rows.values())
    l2 = timer.device.l2_bytes
    outs = {}
    order = IMPLS if index % 2 == 0 else IMPLS[::-1]  # alternate who runs first
    for impl in order:
        r = rows[impl]
        r["bytes"] = nbytes
        r["l2_warm"] = bool(nbytes < 2 * l2) if l2 else None
        fn = jax.jit(partial(case.call, ours if impl == "jax_kernels" else ref))
        try:
            ms, n, out = timer.time(fn, args, out_bytes=_nbytes(out_shape))
        except Exception as e:  # noqa: BLE001
            if debug:
                traceback.print_exc()
            r["error"] = _error_text(e)
            continue
        outs[impl] = out
        r.update(time_ms=ms, iterations=n, time_ms_min=min(timer.last_times, default=None),
                 time_ms_max=max(timer.last_times, default=None))
        if ms > 0:
            r["gbps"] = nbytes / (ms * 1e-3) / 1e9
            if case.flops:
                r["tflops"] = case.flops / (ms * 1e-3) / 1e12
            elif ceiling_gbps:
                r["frac_ceiling"] = r["gbps"] / ceiling_gbps
    mine, base = rows["jax_kernels"], rows["jnp"]
    if mine["time_ms"] and base["time_ms"]:
        mine["ratio"] = base["time_ms"] / mine["time_ms"]
    if len(outs) == 2:
        try:
            errs = [float(max_rel_err(a, b)) for a, b in
                    zip(jax.tree.leaves(outs["jax_kernels"]), jax.tree.leaves(outs["jnp"]))]
            mine["max_rel_err"] = max(errs) if errs else 0.0
            if not math.isfinite(mine["max_rel_err"]):
                mine["error"] = "output differs from jnp: non-finite error (NaN where jnp has a value)"
        except Exception as e:  # noqa: BLE001
            mine["error"] = "comparison: " + _error_text(e)
    del outs
    return [mine, base]


def run_cases(cases, ours, ref, timer: Timer, *, ceiling_gbps: float, device: str, seed: int = 0,
              progress: bool = True, debug: bool = False, rows_out: list | None = None,
              on_case=None) -> list[dict]:
    """Runs every case; rows are appended to `rows_out` as they come (kept on interruption), and
    `on_case(rows)` is called after each case (e.g. to save partial results)."""
    rows = rows_out if rows_out is not None else []
    bar = Progress(len(cases), enabled=progress)
    cache = InputCache(seed, on_device_rng=timer.device.on_gpu)
    try:
        for i, case in enumerate(cases):
            rows += run_case(case, i, ours, ref, timer, cache, ceiling_gbps, device, debug)
            bar.update(f"{case.op} {case.dtype} {case.label}")
            if on_case is not None:
                on_case(rows)
    finally:
        cache.clear()
        bar.close()
    return rows
