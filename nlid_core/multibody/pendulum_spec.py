"""What defines a double-pendulum run and what it returns, for the flexible model and its rigid limit
alike: the specification (rod geometry, material, elements per rod, gravity), the solver settings, the
run (time, tip, states, sensitivities, solver counts), and the output grid of a simulation."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..errors import ModelSpecError

FloatArray = NDArray[np.float64]

#: Relative tolerance of "the output step is a multiple of the step".
_MULTIPLE_RTOL = 1e-9

__all__ = ["PARAMETERS", "MAX_T_END", "PendulumSpec", "SolverSettings", "PendulumRun"]


#: Parameter names accepted for sensitivities and by :func:`tip_response`.
PARAMETERS = ("theta1", "theta2", "E_ab", "E_oa")


#: Longest simulated horizon, s.
MAX_T_END = 60.0


def _positive(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ModelSpecError(f"`{name}` must be a finite positive number, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class PendulumSpec:
    """Geometry and material of the double pendulum (SI units).

    Attributes
    ----------
    length_oa, length_ab : float, m
        Rod lengths.
    height : float, m
        In-plane section height (bending stiffness and rotary inertia). 0.4 reproduces the paper's table.
    width : float, m
        Out-of-plane width (cancels from the response).
    density : float, kg/m³
    e_oa, e_ab : float, Pa
        Young's moduli of OA and AB.
    nu : float
        Poisson ratio, in [0, 0.5).
    n_oa, n_ab : int
        Number of ANCF elements per rod (1 … 50).
    gravity : float, m/s²
        Acceleration of gravity along −y (may be 0, not negative).
    """

    length_oa: float = 1.0
    length_ab: float = 2.0
    height: float = 0.4
    width: float = 0.02
    density: float = 5540.0
    e_oa: float = 2e8
    e_ab: float = 2e7
    nu: float = 0.3
    n_oa: int = 2
    n_ab: int = 4
    gravity: float = 9.80665

    def __post_init__(self) -> None:
        for name in ("length_oa", "length_ab", "height", "width", "density", "e_oa", "e_ab"):
            _positive(name, getattr(self, name))
        if isinstance(self.nu, bool) or not isinstance(self.nu, (int, float)) or not 0.0 <= self.nu < 0.5:
            raise ModelSpecError(f"`nu` must be a number in [0, 0.5), got {self.nu!r}")
        for name in ("n_oa", "n_ab"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= 50:
                raise ModelSpecError(f"`{name}` must be an integer in 1 … 50, got {v!r}")
        g = self.gravity
        if isinstance(g, bool) or not isinstance(g, (int, float)) or not math.isfinite(g) or g < 0:
            raise ModelSpecError(f"`gravity` must be a finite number >= 0, got {g!r}")


@dataclass(frozen=True, kw_only=True)
class SolverSettings:
    """Generalized-α settings.

    Attributes
    ----------
    dt : float, s
        Time step (the paper's 5e-4 s); must divide ``dt_out``.
    rho_inf : float
        Spectral radius at infinite frequency, in [0, 1] (1: no numerical dissipation).
    tol : float
        Newton tolerance on the residual relative to
        :math:`\\|Q_g\\|_\\infty + \\|M\\ddot q\\|_\\infty + \\|Q_e\\|_\\infty` (never below the rounding level of
        :func:`nlid_core.multibody.ancf.residual_floor`).
    max_iter : int
        Newton iterations allowed per step.
    """

    dt: float = 5e-4
    rho_inf: float = 0.9
    tol: float = 1e-10
    max_iter: int = 25

    def __post_init__(self) -> None:
        _positive("dt", self.dt)
        r = self.rho_inf
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0.0 <= r <= 1.0:
            raise ModelSpecError(f"`rho_inf` must be a number in [0, 1], got {r!r}")
        _positive("tol", self.tol)
        m = self.max_iter
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 1 <= m <= 1000:
            raise ModelSpecError(f"`max_iter` must be an integer in 1 … 1000, got {m!r}")


@dataclass(frozen=True, kw_only=True)
class PendulumRun:
    """A simulated run of the double pendulum.

    Attributes
    ----------
    success : bool
    message : str
    t : (n,) ndarray, s
        Output times, multiples of ``dt_out`` from 0 to ``t_end``.
    x_b, y_b : (n,) ndarray, m
        Tip B (NaN at the rows after a failure).
    nodes : (n, n_nodes, 2) ndarray or None, m
        Node positions O, OA's interior nodes, A, AB's interior nodes, B (``n_nodes = n_oa + n_ab + 1``).
    sensitivities : mapping of str to (n, 2) ndarray
        ∂(x_B, y_B)/∂p per output time for each requested name (m/rad, m/Pa); empty when none was asked.
    model : str
        ``"ancf"`` or ``"rigid"``.
    steps : int
        Time steps taken (rigid: right-hand-side evaluations).
    newton_iterations : int
        Newton iterations in total (0 for the rigid model).
    elapsed_s : float, s
        Wall time of the integration (``time.perf_counter``).
    """

    success: bool
    message: str
    t: FloatArray
    x_b: FloatArray
    y_b: FloatArray
    nodes: FloatArray | None
    sensitivities: Mapping[str, FloatArray] = field(default_factory=dict)
    model: str
    steps: int
    newton_iterations: int
    elapsed_s: float

    def to_frame(self) -> pd.DataFrame:
        """The tip trajectory as a frame with columns ``t``, ``x_B``, ``y_B``."""
        return pd.DataFrame({"t": self.t, "x_B": self.x_b, "y_B": self.y_b})


def _grid(t_end: float, dt_out: float, dt: float | None) -> tuple[int, int]:
    """Validate the output grid; (rows after t = 0, steps per row)."""
    _positive("t_end", t_end)
    if t_end > MAX_T_END:
        raise ModelSpecError(f"`t_end` must be at most {MAX_T_END:g} s, got {t_end!r}")
    _positive("dt_out", dt_out)
    if dt_out > t_end * (1 + _MULTIPLE_RTOL):
        raise ModelSpecError(f"`dt_out` must not exceed `t_end` ({t_end!r} s), got {dt_out!r}")
    n_out = int(math.floor(t_end / dt_out * (1 + _MULTIPLE_RTOL)))
    if dt is None:
        return n_out, 1
    k = max(1, round(dt_out / dt))
    if abs(k * dt - dt_out) > _MULTIPLE_RTOL * dt_out:
        raise ModelSpecError(f"`dt_out` must be a positive multiple of the step `dt` = {dt!r} s, got {dt_out!r}")
    return n_out, k


def _angles(theta1: float, theta2: float) -> tuple[float, float]:
    out = []
    for name, v in (("theta1", theta1), ("theta2", theta2)):
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise ModelSpecError(f"`{name}` must be a finite number (rad), got {v!r}") from None
        if isinstance(v, bool) or not math.isfinite(x):
            raise ModelSpecError(f"`{name}` must be a finite number (rad), got {v!r}")
        out.append(x)
    return out[0], out[1]
