"""Small reference models written against an ops interface (`Ops`), runnable with jax-kernels or pure jnp."""
from .gpt import GPTConfig, Ops, forward, init_params, jnp_ops, kernel_ops, random_tokens

__all__ = ["GPTConfig", "Ops", "forward", "init_params", "jnp_ops", "kernel_ops", "random_tokens"]
