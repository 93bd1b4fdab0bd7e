"""Timers and the machine description (method: bench/README and shared benchmarking.md).

GPU: CUPTI kernel time (`jax.experimental.mosaic.gpu.profiler.measure`), the sum of every kernel one
call launches, median over N calls. The profiler keeps each call's output alive until it reads the
timings, so N is bounded by free device memory (N >= 3).
CPU: a host clock around `f(*args)` + `block_until_ready`, median over enough calls.
"""
from __future__ import annotations

import platform
import statistics
import sys
import time
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

METHOD_GPU = (
    "CUPTI kernel time per call (jax.experimental.mosaic.gpu.profiler.measure: the sum of all kernels one "
    "jitted call launches, custom calls included), median over N calls after one warm-up call; N = 10, and "
    "up to 100 for short calls (as many as fit in 50 ms of host-timed calls: a 3 us kernel's median of 10 "
    "moved by one 0.032 us step of the timer between runs); N bounded by device memory (the profiler keeps "
    "every output alive). Bytes = inputs read once + outputs written "
    "once; GB/s = bytes / median time (1 GB = 1e9 B). FLOPs = 2*M*N*K. Copy ceiling = x * c over a 1 GiB "
    "float32 array, measured the same way in the same run (max of the measurements at start and end). "
    "Random normal inputs (random ints for int8). Ours and the jnp baseline run back to back per case, "
    "alternating which goes first. l2_warm marks cases whose inputs+outputs are under twice the L2 size: "
    "repeated calls may be served from L2 and can exceed the DRAM copy ceiling.")
METHOD_CPU = (
    "Host timer (time.perf_counter around the jitted call + block_until_ready), median over 3..N calls after "
    "one warm-up call (on a GPU without CUPTI it includes dispatch). Bytes = inputs read once + outputs "
    "written once; FLOPs = 2*M*N*K. Copy ceiling = x * c over a float32 array (16-64 MiB on CPU, best of "
    "three). Random normal inputs. CPU figures are not GPU figures.")

# L2 sizes by device kind (bytes); used only for the l2_warm flag.
_L2_BYTES = (("H200", 60 << 20), ("H100", 50 << 20), ("GH200", 60 << 20), ("A100", 40 << 20),
             ("L40", 96 << 20), ("4090", 72 << 20), ("A10", 6 << 20))


@dataclass
class DeviceInfo:
    backend: str            # "gpu" | "cpu" | ...
    kind: str               # device_kind, e.g. "NVIDIA H100 80GB HBM3"
    platform_version: str
    memory_limit: int | None
    l2_bytes: int | None

    @property
    def on_gpu(self) -> bool:
        return self.backend == "gpu"

    def as_dict(self):
        return dict(backend=self.backend, kind=self.kind, platform_version=self.platform_version,
                    memory_limit=self.memory_limit, l2_bytes=self.l2_bytes)


def describe_device() -> DeviceInfo:
    dev = jax.devices()[0]
    backend = jax.default_backend()
    try:
        pv = str(dev.client.platform_version)
    except Exception:  # noqa: BLE001 - informational only
        pv = ""
    limit = None
    try:
        stats = dev.memory_stats() or {}
        limit = stats.get("bytes_limit")
    except Exception:  # noqa: BLE001
        pass
    l2 = None
    if backend == "gpu":
        l2 = next((b for name, b in _L2_BYTES if name in dev.device_kind), 50 << 20)
    return DeviceInfo(backend, dev.device_kind, pv, limit, l2)


def versions() -> dict[str, str]:
    import jaxlib

    import jax_kernels
    out = {"jax": jax.__version__, "jaxlib": getattr(jaxlib, "__version__", None) or
           jaxlib.version.__version__, "jax_kernels": jax_kernels.__version__,
           "jax_kernels_cuda": bool(jax_kernels.WITH_CUDA), "numpy": np.__version__,
           "python": platform.python_version(), "platform": platform.platform()}
    return out


def _bytes_in_use() -> int:
    try:
        return int((jax.devices()[0].memory_stats() or {}).get("bytes_in_use", 0))
    except Exception:  # noqa: BLE001
        return 0


class Timer:
    """`time(f, args, out_bytes)` -> (median ms, calls timed, first output)."""

    def __init__(self, device: DeviceInfo, iterations: int, min_time_s: float = 0.2, max_case_s: float = 2.0,
                 short_calls_s: float = 0.05, short_factor: int = 10):
        self.device = device
        self.max_case_s = max_case_s
        # GPU: calls short enough that iterations * short_factor of them take at most short_calls_s (host-timed,
        # dispatch included) are timed that many times; longer ones as many as fit, at least `iterations`.
        self.short_calls_s, self.short_factor = short_calls_s, max(1, short_factor)
        self.last_times: list[float] = []  # per-call ms of the last measurement (spread)
        self.iterations = max(1, iterations)
        self.min_time_s = min_time_s
        self.name = "host"
        self._measure = None
        if device.on_gpu:
            try:
                from jax.experimental.mosaic.gpu.profiler import measure  # only importable/usable on GPU
                self._measure, self.name = measure, "cupti"
            except Exception as e:  # noqa: BLE001
                self.use_host_timer(f"CUPTI profiler unavailable ({type(e).__name__}: {e})")

    def use_host_timer(self, reason: str):
        """Falls back to the host timer (it includes dispatch: small GPU cases read slower than they are)."""
        warn(f"{reason}: timing with a host timer, which includes dispatch overhead")
        self._measure, self.name = None, "host"

    def calls_for(self, out_bytes: int, call_s: float | None = None) -> int:
        """GPU: `iterations` calls, more for short ones (call_s: one call's host time); every output stays alive
        during the measurement, so they are kept within half the free memory."""
        n = self.iterations
        if self.device.on_gpu and call_s is not None:
            n = max(n, min(n * self.short_factor, int(self.short_calls_s / max(call_s, 1e-9))))
        if self.device.on_gpu and self.device.memory_limit and out_bytes > 0:
            free = self.device.memory_limit - _bytes_in_use()
            n = min(n, max(3, int(0.5 * free // out_bytes)))
        return n

    def time(self, f, args, out_bytes: int = 0):
        if self._measure is not None:
            # Compile, then one host-timed call: short cases get more calls (calls_for), and a case slower than
            # ~0.2 s fewer, so one slow kernel cannot eat the run's time budget (the timed calls below are
            # CUPTI's, not this one).
            jax.block_until_ready(f(*args))
            t0 = time.perf_counter()
            jax.block_until_ready(f(*args))
            call_s = time.perf_counter() - t0
            n = self.calls_for(out_bytes, call_s)
            n = min(n, max(3, int(self.max_case_s / max(call_s, 1e-9))))
            out, ts = self._measure(f, iterations=n)(*args)
            if ts is None:
                raise RuntimeError("no GPU kernel was launched (nothing to time)")
            ts = [t for t in ([ts] if np.isscalar(ts) else ts) if t is not None]
            if not ts:
                raise RuntimeError("the profiler returned no kernel time")
            self.last_times = ts
            return float(statistics.median(ts)), n, out
        out = jax.block_until_ready(f(*args))  # compile + warm-up
        times = []
        start = time.perf_counter()
        while len(times) < 3 or (len(times) < self.iterations and
                                 time.perf_counter() - start < self.min_time_s):
            t0 = time.perf_counter()
            jax.block_until_ready(f(*args))
            times.append((time.perf_counter() - t0) * 1e3)
        self.last_times = times
        return float(statistics.median(times)), len(times), out


def copy_ceiling(timer: Timer, quick: bool = False) -> tuple[float, int]:
    """GB/s of `x * c` (read once, write once) over 1 GiB on GPU (16-64 MiB on CPU)."""
    if timer.device.on_gpu:
        nbytes = 1 << 30
    else:
        nbytes = (16 << 20) if quick else (64 << 20)
    x = jax.random.normal(jax.random.key(7), (nbytes // 4,), jnp.float32)
    f = jax.jit(lambda x: x * jnp.float32(1.0001))
    try:
        ms, _, out = timer.time(f, (x,), out_bytes=nbytes)
    except Exception as e:  # noqa: BLE001 - a broken profiler must not end the run
        if timer.name != "cupti":
            raise
        timer.use_host_timer(f"CUPTI measurement failed ({type(e).__name__}: {e})")
        ms, _, out = timer.time(f, (x,), out_bytes=nbytes)
    if not timer.device.on_gpu:  # a shared host is noisy: best of three medians
        ms = min([ms] + [timer.time(f, (x,))[0] for _ in range(2)])
    del out, x
    return 2 * nbytes / (ms * 1e-3) / 1e9, nbytes


def warn(msg: str):
    print(msg, file=sys.stderr, flush=True)
