"""Session 35: which kernels one benchmark call of ours launches, and their CUPTI times, against XLA's x * c at the
same bytes; then the same kernels 8 to a jitted chain (back to back inside one executable), to see whether the
benchmark's one-call executables cost our row copies time that XLA's kernels do not pay.

  python bench/lab/s35_kernels_lab.py
"""
import os
import statistics

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_command_buffer="
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import jax_kernels as jk  # noqa: E402

ON_GPU = jax.default_backend() == "gpu"
key = jax.random.key(0)
if ON_GPU:
    from jax.experimental.mosaic.gpu.profiler import measure
d = 1 if ON_GPU else 64
n = 32 * 128 * 64 * 64 * 2 // 4 // d
x = jax.random.normal(key, (n,), jnp.float32)
p = jax.random.normal(key, (32, 128 // d, 64, 64), jnp.bfloat16)
r = x.reshape(2, 2, n // 4)


def show(label, f, a, tiers="", iters=10):
    if tiers:
        os.environ["JK_TRANSPOSE_TIERS"] = tiers
    try:
        jax.block_until_ready(f(a))
        if not ON_GPU:
            print(label, "(no GPU)", flush=True)
            return
        _, t = measure(f, aggregate=False, iterations=iters)(a)
    finally:
        os.environ.pop("JK_TRANSPOSE_TIERS", None)
    names = [k for k, _ in t[0]]
    per = [statistics.median(it[i][1] for it in t) * 1e3 for i in range(len(names))]
    if len(names) > 2:  # a chain: the kernels' median times, their mean and range
        print(f"{label:44s} {len(names)} kernels ({names[0][:40]}): mean {statistics.mean(per):.2f} us, "
              f"range {min(per):.2f}-{max(per):.2f}: " + " ".join(f"{us:.2f}" for us in per), flush=True)
        return
    print(f"{label:44s} {len(names)} kernel(s) a call: " +
          "; ".join(f"{nm[:48]} {us:.2f} us" for nm, us in zip(names, per)), flush=True)


# S35_CHAINS_ONLY=1 (call 13): skip the single calls.
for rnd in range(0 if os.environ.get("S35_CHAINS_ONLY") else 2):
    print(f"--- round {rnd}")
    show("x*c f32 67 MB", jax.jit(lambda a: a * jnp.float32(1.0001)), x)
    show("row copy (2,2,n) (1,0,2) default", jax.jit(lambda a: jk.transpose(a, (1, 0, 2))), r)
    show("row copy (2,2,n) (1,0,2) rc256x2", jax.jit(lambda a: jk.transpose(a, (1, 0, 2))), r, "rc256x2")
    show("jnp (2,2,n) (1,0,2)", jax.jit(lambda a: jnp.transpose(a, (1, 0, 2))), r)
    show("permute default (tiled)", jax.jit(lambda a: jk.transpose(a, (0, 2, 1, 3))), p)
    show("permute norowtile (input order)", jax.jit(lambda a: jk.transpose(a, (0, 2, 1, 3))), p, "norowtile")
    show("permute norowtile,rcout (output order)", jax.jit(lambda a: jk.transpose(a, (0, 2, 1, 3))), p,
         "norowtile,rcout")
    show("x*c bf16 permute-sized", jax.jit(lambda a: a * jnp.bfloat16(1.5)), p)


for rnd in range(2):
    print(f"--- chains, round {rnd}")
    # optimization_barrier between the steps: no fusion of the multiplies, no folding of transpose pairs.
    def x8(a):
        for _ in range(8):
            a = jax.lax.optimization_barrier(a * jnp.bfloat16(-1.0))
        return a
    show("8 x*c bf16 in one jit", jax.jit(x8), p, iters=5)
    for tiers in ["", "norowtile", "norowtile,rcout"]:
        def f8(a):
            for _ in range(8):
                a = jk.transpose(a, (0, 2, 1, 3))
            return a
        show(f"8 permutes in one jit {tiers or 'default'}", jax.jit(f8), p, tiers, iters=5)

    def r8(a):
        for _ in range(8):
            a = jk.transpose(a, (1, 0, 2))
        return a
    show("8 row copies (2,2,n) (1,0,2) in one jit", jax.jit(r8), r, iters=5)
    show("8 row copies rc256x2 in one jit", jax.jit(r8), r, "rc256x2", iters=5)

    def jr8(a):
        for _ in range(8):
            a = jax.lax.optimization_barrier(jnp.transpose(a, (1, 0, 2)))
        return a
    show("8 jnp row copies in one jit", jax.jit(jr8), r, iters=5)

    def xf8(a):
        for _ in range(8):
            a = jax.lax.optimization_barrier(a * jnp.float32(-1.0))
        return a
    show("8 x*c f32 in one jit", jax.jit(xf8), x, iters=5)

    def j8(a):
        for _ in range(8):
            a = jax.lax.optimization_barrier(jnp.transpose(a, (0, 2, 1, 3)))
        return a
    show("8 jnp permutes in one jit", jax.jit(j8), p, iters=5)
