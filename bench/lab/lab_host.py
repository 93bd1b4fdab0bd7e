"""Session 34's host-clock timer for the labs that time whole jitted programs (bench/lab/s34_pdl_lab.py,
s34_pdl_graph.py, s34_pdl_chain.py, s34_host_lab.py): wall clock per call, block_until_ready each, median."""
import statistics
import time

import jax


def host_us(f, args, calls, warm, on_gpu=True, cpu_calls=3):
    """Median microseconds of `calls` calls of f(*args) after `warm` untimed ones (`cpu_calls` off the GPU)."""
    for _ in range(warm):
        jax.block_until_ready(f(*args))
    ts = []
    for _ in range(calls if on_gpu else cpu_calls):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        ts.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(ts)
