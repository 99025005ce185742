"""The differentiator contract, central differences, the registry and :func:`differentiate`."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelSpecError
from ._args import FloatArray, _as_signal, _check_dt, _check_order, _reject_window
from .savgol import savgol_derivative
from .spectral import spectral_derivative

__all__ = ["Differentiator", "DIFFERENTIATORS", "differentiate", "gradient_derivative"]


class Differentiator(Protocol):
    """Call signature shared by every differentiator."""

    def __call__(self, y: ArrayLike, dt: float, *, order: int = 1, window: int | None = None) -> FloatArray: ...


def gradient_derivative(y: ArrayLike, dt: float, *, order: int = 1, window: int | None = None) -> FloatArray:
    """Central finite-difference derivative (``numpy.gradient``, ``order`` times).

    Second-order accurate, one-sided at the ends. There is no smoothing: the
    white-noise gain of the first derivative is ``1 / (sqrt(2) dt)`` and of
    the second ``~0.6 / dt^2``, so use it only for clean (simulated) data.

    Parameters
    ----------
    y : (n,) array_like
        Uniformly sampled signal (any unit u).
    dt : float, s
        Sampling interval.
    order : int
        Derivative order, 1 or 2.
    window : None
        Not used by this method; must be None.

    Returns
    -------
    (n,) ndarray, u/s or u/s^2
        The derivative at every sample.
    """
    order = _check_order(order)
    _reject_window("gradient", window)
    out = _as_signal(y, min_len=3)
    dt = _check_dt(dt)
    for _ in range(order):
        out = np.gradient(out, dt, edge_order=2)
    return np.asarray(out, dtype=np.float64)


#: Differentiators by name.
DIFFERENTIATORS: Mapping[str, Differentiator] = MappingProxyType(
    {
        "savgol": savgol_derivative,
        "spectral": spectral_derivative,
        "gradient": gradient_derivative,
    }
)


def _resolve_method(method: str | Callable[..., Any]) -> tuple[str, Callable[..., Any]]:
    if callable(method):
        return getattr(method, "__name__", repr(method)), method
    if isinstance(method, str) and method in DIFFERENTIATORS:
        return method, DIFFERENTIATORS[method]
    raise ModelSpecError(
        f"unknown differentiation `method` {method!r}; valid names are {', '.join(sorted(DIFFERENTIATORS))}"
        " (or pass a callable)"
    )


def differentiate(
    y: ArrayLike,
    dt: float,
    *,
    method: str | Callable[..., Any] = "savgol",
    order: int = 1,
    window: int | None = None,
    **options: Any,
) -> FloatArray:
    """Derivative of a uniformly sampled signal by a named or given method.

    Parameters
    ----------
    y : (n,) array_like
        Signal (any unit u).
    dt : float, s
        Sampling interval.
    method : str or callable
        A name in :data:`DIFFERENTIATORS` (``"savgol"``, ``"spectral"``,
        ``"gradient"``) or a callable with the same signature.
    order : int
        Derivative order, 1 or 2.
    window : int or None, samples
        Savitzky–Golay window (None: chosen from the signal).
    **options
        Extra keyword arguments of the method (``f_cut_hz`` for
        ``"spectral"``).

    Returns
    -------
    (n,) ndarray, u/s or u/s^2
        The derivative at every sample.

    Raises
    ------
    ModelSpecError
        Unknown method name, unsupported option, or a callable returning
        the wrong shape.
    """
    name, fn = _resolve_method(method)
    order = _check_order(order)
    try:
        inspect.signature(fn).bind(y, dt, order=order, window=window, **options)
    except TypeError as exc:
        raise ModelSpecError(f"differentiation `method` {name!r} does not accept these options: {exc}") from None
    except ValueError:  # pragma: no cover - builtins without a signature
        pass
    out = np.asarray(fn(y, dt, order=order, window=window, **options), dtype=np.float64)
    n = np.shape(y)[0] if np.ndim(y) >= 1 else 0
    if out.shape != (n,):
        raise ModelSpecError(f"differentiation `method` {name!r} returned shape {out.shape}, expected ({n},)")
    return out


