"""Input validation shared by the public wrappers: every error names the op, the argument, what was
expected and what arrived, and is raised before anything is traced into a custom call."""
from __future__ import annotations

from typing import Iterable

import numpy as np
import jax.numpy as jnp

FLOAT_DTYPES = (np.dtype(jnp.float32), np.dtype(jnp.bfloat16), np.dtype(jnp.float16))


def dtype_name(dt) -> str:
    return np.dtype(dt).name


def check_array(op: str, arg: str, x) -> None:
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        raise TypeError(f"{op}: argument '{arg}': expected an array, got {type(x).__name__}")


def check_float_dtype(op: str, arg: str, x, allowed: Iterable = FLOAT_DTYPES) -> None:
    check_array(op, arg, x)
    allowed = tuple(np.dtype(a) for a in allowed)
    if np.dtype(x.dtype) not in allowed:
        names = ", ".join(dtype_name(a) for a in allowed)
        raise TypeError(f"{op}: argument '{arg}': expected dtype {names}; got {dtype_name(x.dtype)}")


def check_same_dtype(op: str, arg: str, x, ref_arg: str, ref) -> None:
    if np.dtype(x.dtype) != np.dtype(ref.dtype):
        raise TypeError(f"{op}: argument '{arg}': expected dtype {dtype_name(ref.dtype)} (the dtype of "
                        f"'{ref_arg}'); got {dtype_name(x.dtype)}")


def normalize_axis(op: str, axis, ndim: int, arg: str = "axis") -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{op}: argument '{arg}': expected an int; got {type(axis).__name__}")
    if ndim == 0:
        raise ValueError(f"{op}: argument 'x': expected an array of rank >= 1; got a scalar")
    a = int(axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"{op}: argument '{arg}': expected an axis in [{-ndim}, {ndim}) for an "
                         f"array of rank {ndim}; got {a}")
    return a % ndim


def check_shape(op: str, arg: str, x, expected: tuple) -> None:
    if tuple(x.shape) != tuple(expected):
        raise ValueError(f"{op}: argument '{arg}': expected shape {tuple(expected)}; got {tuple(x.shape)}")
