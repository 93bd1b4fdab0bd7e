"""jax-kernels: hand-written CUDA kernels (with C++ CPU twins) as JAX primitives over XLA FFI.

Every op is a real primitive: it composes with ``jax.jit`` and ``jax.vmap``, and lowers to one custom
call on CPU and on CUDA GPUs. ``jax_kernels.reference`` holds the pure jax.numpy equivalents.
"""
from . import _registry  # registers the FFI targets before any op is traced
from . import reference
from .matmul import linear, matmul
from .norms import layer_norm, rms_norm
from .softmax import log_softmax, softmax
from .transpose import transpose

__version__ = "0.1.0"
WITH_CUDA = _registry.WITH_CUDA

__all__ = ["layer_norm", "rms_norm", "softmax", "log_softmax", "transpose", "matmul", "linear",
           "reference", "WITH_CUDA"]
