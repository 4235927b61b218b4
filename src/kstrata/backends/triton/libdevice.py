"""``libdevice`` math on Triton's interpreter.

Triton kernels call CUDA's math library through ``triton.language.extra.libdevice``
(``libdevice.tanh``, ``erf``, ``pow``, ...; GELU, SiLU and softmax kernels
written for a GPU use it often). On a GPU those calls become ``__nv_*``
functions; on the interpreter the generic module's functions are stubs that
return None and the CUDA module's raise "extern_elementwise not supported in
interpreter mode", so an honest kernel read ``runtime_error`` on
``triton-interp`` (red-team rt56: a GELU through ``libdevice.erf``).
:func:`interpret_libdevice` gives the float functions of both modules NumPy
implementations, computed in float64 and rounded once to the argument's dtype
(float32 or float64, the dtypes libdevice takes; libdevice itself is within
a few ulp of that). Other dtypes raise, as a GPU compile would.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


#: libdevice names (both modules) -> NumPy functions on float64 arrays
FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "tan": np.tan, "sin": np.sin, "cos": np.cos,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10.0, x),
    "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x), "cbrt": np.cbrt,
    "erf": np.vectorize(math.erf, otypes=[np.float64]), "erfc": np.vectorize(math.erfc, otypes=[np.float64]),
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint, "nearbyint": np.rint,
    "round": _round_half_away, "abs": np.abs, "fabs": np.abs,
    "pow": np.power, "atan2": np.arctan2, "fmod": np.fmod, "hypot": np.hypot, "fmax": np.fmax,
    "fmin": np.fmin, "copysign": np.copysign, "fdim": lambda x, y: np.maximum(x - y, 0.0),
    "fma": lambda x, y, z: x * y + z,
    # correctly rounded arithmetic (_rn: float64, then one rounding to float32, is correctly rounded for
    # these) and CUDA's fast approximations (within a few ulp on a GPU; exact here)
    "add_rn": np.add, "sub_rn": np.subtract, "mul_rn": np.multiply, "div_rn": np.divide,
    "fma_rn": lambda x, y, z: x * y + z, "sqrt_rn": np.sqrt, "rsqrt_rn": lambda x: 1.0 / np.sqrt(x),
    "rcp_rn": lambda x: 1.0 / x, "fast_dividef": np.divide, "fast_expf": np.exp,
    "fast_exp10f": lambda x: np.power(10.0, x),
    "fast_logf": np.log, "fast_log2f": np.log2, "fast_log10f": np.log10, "fast_sinf": np.sin, "fast_cosf": np.cos,
    "fast_tanf": np.tan, "fast_powf": np.power, "saturatef": lambda x: np.clip(x, 0.0, 1.0),
    "sinpi": lambda x: np.sin(np.pi * x), "cospi": lambda x: np.cos(np.pi * x), "rcbrt": lambda x: 1.0 / np.cbrt(x),
    "rhypot": lambda x, y: 1.0 / np.hypot(x, y),
    "normcdf": np.vectorize(lambda v: 0.5 * math.erfc(-v / math.sqrt(2.0)), otypes=[np.float64]),
    "lgamma": np.vectorize(math.lgamma, otypes=[np.float64]),
}
_FLOATS = (np.float32, np.float64)


def _numpy_function(name: str, f: Callable[..., np.ndarray]) -> Callable[..., Any]:
    def call(*args: Any, _semantic: Any = None, **_: Any) -> Any:
        import triton.language as tl
        from triton.runtime.interpreter import TensorHandle

        tensors = [a for a in args if isinstance(a, tl.tensor)]
        if not tensors:
            raise TypeError(f"libdevice.{name} takes a tensor argument")
        first = tensors[0]
        if name == "abs" and first.handle.data.dtype.kind == "i":  # libdevice's abs takes int32 and int64 too
            return tl.tensor(TensorHandle(np.abs(first.handle.data), first.dtype.scalar), first.type)
        if first.handle.data.dtype.type not in _FLOATS:
            raise TypeError(f"libdevice.{name} takes float32 or float64, not {first.dtype}")
        data = [np.asarray(a.handle.data if isinstance(a, tl.tensor) else a, dtype=np.float64) for a in args]
        with np.errstate(all="ignore"):  # NaN and inf as the GPU's functions give them
            out = np.asarray(f(*data)).astype(first.handle.data.dtype)
        like = next((t for t in tensors if t.handle.data.shape == out.shape), first)
        return tl.tensor(TensorHandle(out, first.dtype.scalar), like.type)

    call.__name__ = name
    call._kstrata_libdevice = True  # type: ignore[attr-defined]
    return call


def interpret_libdevice() -> bool:
    """Give ``triton.language.extra.libdevice`` and ``...extra.cuda.libdevice``
    NumPy implementations of :data:`FUNCTIONS` (idempotent). Call before
    candidate code runs, in the process that interprets it (never where
    kernels are compiled for a GPU). Returns False when this Triton has
    neither module."""
    import importlib

    done = False
    for path in ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice"):
        try:
            module = importlib.import_module(path)
        except ImportError:
            continue
        for name, f in FUNCTIONS.items():
            if hasattr(module, name) and not getattr(getattr(module, name), "_kstrata_libdevice", False):
                setattr(module, name, _numpy_function(name, f))
        done = True
    return done
