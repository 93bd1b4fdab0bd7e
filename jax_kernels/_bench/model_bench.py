"""End-to-end: the GPT decoder forward pass with jax-kernels ops against the same model in pure jnp.

Two timings per implementation, both of one jitted forward on the same weights and tokens:
- kernel time (GPU only): CUPTI, the sum of every kernel one forward launches, median over N calls;
- wall time: N forwards dispatched back to back, one block_until_ready at the end, divided by N
  (includes launch gaps and host dispatch; on CPU it is the only timing).
tokens/s = batch * seq / time. The logits of the two are compared in float32.
"""
from __future__ import annotations

import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ..models import gpt
from .timing import Timer

GPT2_SMALL = dict(layers=12, width=768, heads=12, vocab=50257, batch=8, seq=1024)
TINY = dict(layers=2, width=128, heads=4, vocab=512, batch=2, seq=64)


def _wall_ms(f, args, calls: int) -> float:
    jax.block_until_ready(f(*args))
    t0 = time.perf_counter()
    out = None
    for _ in range(calls):
        out = f(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - t0) * 1e3 / calls


@jax.jit
def _logit_errors(a, b):
    a = a.astype(jnp.float32)
    b = b.astype(jnp.float32)
    rel = jnp.linalg.norm((a - b).ravel()) / jnp.maximum(jnp.linalg.norm(b.ravel()), 1e-30)
    return rel, jnp.max(jnp.abs(a - b)), jnp.max(jnp.abs(b))


def run_model(cfg: gpt.GPTConfig, batch: int, seq: int, timer: Timer, *, seed: int = 0,
              wall_calls: int = 10, log=print) -> dict:
    params = gpt.init_params(cfg, seed)
    tokens = gpt.random_tokens(cfg, batch, seq, seed + 1)
    tokens_per_call = batch * seq
    logits_bytes = batch * seq * cfg.vocab * jnp.dtype(cfg.dtype).itemsize
    impls = {"jax_kernels": gpt.kernel_ops(), "jnp": gpt.jnp_ops()}
    result = dict(config=dict(layers=cfg.layers, width=cfg.width, heads=cfg.heads, vocab=cfg.vocab,
                              dtype=cfg.dtype, activation=cfg.activation, precision=cfg.precision,
                              params=cfg.n_params()),
                  batch=batch, seq=seq, tokens=tokens_per_call,
                  timer=("CUPTI kernel time + wall clock" if timer.device.on_gpu else "wall clock (host timer)"),
                  impls={})
    outs = {}
    for name, ops in impls.items():
        f = jax.jit(partial(gpt.forward, ops, cfg=cfg))
        r = result["impls"].setdefault(name, {})
        try:
            t0 = time.perf_counter()
            jax.block_until_ready(f(params, tokens))
            r["compile_s"] = time.perf_counter() - t0
            if timer.device.on_gpu:
                ms, n, out = timer.time(f, (params, tokens), out_bytes=logits_bytes)
                r.update(kernel_ms=ms, kernel_calls=n, kernel_tokens_per_s=tokens_per_call / (ms * 1e-3))
                del out
            wall = _wall_ms(f, (params, tokens), wall_calls)
            r.update(wall_ms=wall, wall_calls=wall_calls, wall_tokens_per_s=tokens_per_call / (wall * 1e-3))
            outs[name] = f(params, tokens)
        except Exception as e:  # noqa: BLE001 - reported, the other implementation still runs
            r["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:400]
        log(f"  {name}: " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))
    k, j = result["impls"]["jax_kernels"], result["impls"]["jnp"]
    if k.get("kernel_ms") and j.get("kernel_ms"):
        result["speedup_kernel"] = j["kernel_ms"] / k["kernel_ms"]
    if k.get("wall_ms") and j.get("wall_ms"):
        result["speedup_wall"] = j["wall_ms"] / k["wall_ms"]
    if len(outs) == 2:
        rel, mad, scale = (float(v) for v in _logit_errors(outs["jax_kernels"], outs["jnp"]))
        result.update(logits_rel_err=rel, logits_max_abs_diff=mad, logits_max_abs=scale,
                      logits_finite=bool(np.isfinite(rel)))
    return result


def format_model(m) -> str:
    c = m["config"]
    lines = [f"GPT decoder forward: {c['layers']} layers, width {c['width']}, {c['heads']} heads, vocab "
             f"{c['vocab']}, {c['dtype']} ({c['params'] / 1e6:.1f}M params); batch {m['batch']} x seq "
             f"{m['seq']} = {m['tokens']} tokens per forward; timer: {m['timer']}",
             f"{'impl':12s} {'kernel ms':>10s} {'kernel tok/s':>13s} {'wall ms':>10s} {'wall tok/s':>12s}"]
    for name, r in m["impls"].items():
        def g(key, fmt):
            return format(r[key], fmt) if r.get(key) is not None else "-"
        lines.append(f"{name:12s} {g('kernel_ms', '.3f'):>10s} {g('kernel_tokens_per_s', ',.0f'):>13s} "
                     f"{g('wall_ms', '.3f'):>10s} {g('wall_tokens_per_s', ',.0f'):>12s}"
                     + (f"  ERROR {r['error']}" if r.get("error") else ""))
    sp = []
    if m.get("speedup_kernel"):
        sp.append(f"speedup (kernel time) {m['speedup_kernel']:.3f}x")
    if m.get("speedup_wall"):
        sp.append(f"speedup (wall) {m['speedup_wall']:.3f}x")
    if m.get("logits_rel_err") is not None:
        sp.append(f"logits rel err (Frobenius) {m['logits_rel_err']:.2e}, max abs diff "
                  f"{m['logits_max_abs_diff']:.2e} (max |logit| {m['logits_max_abs']:.2f})")
    return "\n".join(lines + ["; ".join(sp)])
