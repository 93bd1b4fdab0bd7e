"""Loads the extension and registers its FFI targets with XLA, once, at import.

The extension's ``registrations()`` returns ``{"cpu": {name: capsule}, "CUDA": {name: capsule}}``; the
same target name is registered on each platform it has a handler for. CUDA registrations are queued by
jaxlib until the CUDA plugin initialises, so importing this module never touches a GPU.
"""
from __future__ import annotations

import jax

from . import _jax_kernels as _ext

WITH_CUDA: bool = bool(_ext.with_cuda)
FFI_API_VERSION: tuple[int, int] = tuple(_ext.ffi_api_version)

_targets = _ext.registrations()
CPU_TARGETS = frozenset(_targets["cpu"])
CUDA_TARGETS = frozenset(_targets["CUDA"])

for _platform, _entries in _targets.items():
    for _name, _capsule in _entries.items():
        jax.ffi.register_ffi_target(_name, _capsule, platform=_platform, api_version=1)
