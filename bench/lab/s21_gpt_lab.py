"""Session 21: the GPT-2-small forward's `linear` shapes (bench model: batch 8 x 1024 tokens, width 768, bf16) one
by one, ours against the jnp composition: where the model's 0.84x comes from. bench/lab/matmul_linear_lab.py's
method (CUPTI, median of 20 calls, one process, XLA command buffers off). The logits head (N = 50257, rows of b
and of the output off 16-byte boundaries) runs as a plain matmul ("mm": the lab's linear always has a bias).

  XLA_FLAGS=--xla_gpu_enable_command_buffer= python bench/lab/s21_gpt_lab.py 8192
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matmul_linear_lab as lab  # noqa: E402

B = "bfloat16"
lab.CASES = [
    ("gpt head matmul 8192x50257x768", B, (8192, 50257, 768), "mm", False, False, ()),
    ("gpt qkv linear 8192x768x768 +bias", B, (8192, 768, 768), None, True, False, ()),
    ("gpt fc linear 8192x3072x768 +bias gelu", B, (8192, 3072, 768), "gelu", True, False, ()),
    ("gpt proj linear 8192x768x3072 +bias +res", B, (8192, 768, 3072), None, True, True, ()),
    ("gpt o linear 8192x768x768 +bias +res", B, (8192, 768, 768), None, True, True, ()),
    ("gpt head matmul 8192x50264x768 (padded N)", B, (8192, 50264, 768), "mm", False, False, ()),
]


def attention_ops():
    """The attention block's other ops at the model's shapes (B 8, H 12, T 1024, Dh 64), ours against jnp."""
    import jax
    import jax.numpy as jnp

    import jax_kernels as jk
    from jax_kernels import reference as ref
    from matmul_wgmma_lab import median_ms

    key = jax.random.key(1)
    k1, k2, k3, k4 = jax.random.split(key, 4)
    bf = jnp.bfloat16
    q = jax.random.normal(k1, (8, 12, 1024, 64), jnp.float32).astype(bf)
    kt = jax.random.normal(k2, (8, 12, 64, 1024), jnp.float32).astype(bf)
    p = jax.nn.softmax(jax.random.normal(k3, (8, 12, 1024, 1024), jnp.float32)).astype(bf)
    v = jax.random.normal(k4, (8, 12, 1024, 64), jnp.float32).astype(bf)
    x4 = jax.random.normal(k1, (8, 1024, 12, 64), jnp.float32).astype(bf)
    mask = jnp.arange(1024)[None, :] <= jnp.arange(1024)[:, None]
    cases = [
        ("scores matmul (8,12,1024,64)@(8,12,64,1024)", jk.matmul, ref.matmul, (q, kt)),
        ("context matmul (8,12,1024,1024)@(8,12,1024,64)", jk.matmul, ref.matmul, (p, v)),
        ("causal softmax (8,12,1024,1024)", lambda s: jk.softmax(s, where=mask), lambda s: ref.softmax(s, where=mask),
         (p,)),
        ("transpose (8,1024,12,64) (0,2,1,3)", lambda a: jk.transpose(a, (0, 2, 1, 3)),
         lambda a: ref.transpose(a, (0, 2, 1, 3)), (x4,)),
        ("transpose (8,1024,12,64) (0,2,3,1)", lambda a: jk.transpose(a, (0, 2, 3, 1)),
         lambda a: ref.transpose(a, (0, 2, 3, 1)), (x4,)),
    ]
    print("| op | ours us | jnp us | jnp/ours |\n|---|---:|---:|---:|")
    for name, ours, theirs, args in cases:
        t1 = median_ms(jax.jit(ours), args, 20) * 1e3
        t2 = median_ms(jax.jit(theirs), args, 20) * 1e3
        print(f"| {name} | {t1:.1f} | {t2:.1f} | {t2 / t1:.3f}x |", flush=True)


if __name__ == "__main__":
    lab.main()
    attention_ops()
