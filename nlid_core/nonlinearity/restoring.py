r"""Restoring force :math:`f - m\ddot x`: what the spring and damper carry.

Plotted against ``x`` or ``ẋ`` (or averaged over a grid of both, :func:`restoring_surface`) it
shows the shape of the stiffness and damping curves directly. The mass, unless given, comes from
an equation-error fit that includes the common nonlinear terms (a purely linear fit biases it on a
nonlinear record).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import signal as sp_signal

from .._checks import check_int as _check_int
from .._checks import check_positive as _check_positive
from ..errors import DataValidationError, ModelSpecError
from ..estimate import equation_error
from ..models import TermModel
from ..record import CHANNEL_LABELS, Record
from ._args import FloatArray, _check_record
from .baseline import baseline_parameter, mass_term
from .thresholds import _LINEAR_TERMS, MASS_TERMS

__all__ = [
    "RestoringForce",
    "RestoringSurface",
    "local_amplitude",
    "restoring_force",
    "restoring_surface",
    "model_restoring_surface",
]


@dataclass(frozen=True, kw_only=True)
class RestoringForce:
    """The force carried by the spring and damper, ``f − m·ẍ``, with the states it depends on.

    Attributes
    ----------
    t, x, v, force : (n,) ndarray
        Time, displacement, velocity and restoring force.
    mass : float
        Mass used (unit ``mass_unit``).
    mass_source : str
        ``"given"`` or how it was estimated (when no positive mass fits the data, ``mass`` is 0 and
        this says so).
    mass_unit : str
    units : mapping
        Unit per channel (``t``, ``x``, ``v``, ``f``); the restoring force has the unit of ``f``.
    record : str
    """

    t: FloatArray
    x: FloatArray
    v: FloatArray
    force: FloatArray
    mass: float
    mass_source: str
    mass_unit: str
    units: Mapping[str, str]
    record: str = ""



@dataclass(frozen=True, kw_only=True)
class RestoringSurface:
    """Restoring force averaged over a grid of (x, ẋ) cells (NaN where no sample falls).

    Attributes
    ----------
    x_centers, v_centers : (nx,), (nv,) ndarray
    force : (nv, nx) ndarray
        Mean restoring force per cell, unit of f.
    count : (nv, nx) ndarray
        Samples per cell.
    units : mapping
    """

    x_centers: FloatArray
    v_centers: FloatArray
    force: FloatArray
    count: NDArray[np.int64]
    units: Mapping[str, str]



def local_amplitude(y: ArrayLike) -> FloatArray:
    """Envelope (magnitude of the analytic signal) of a mean-free signal: its local amplitude.

    Within a few cycles of either end the envelope is less accurate (the FFT-based Hilbert transform
    treats the record as periodic).

    Parameters
    ----------
    y : (n,) array_like
        Uniformly sampled signal.

    Returns
    -------
    (n,) ndarray
        Same unit as ``y``.
    """
    arr = np.asarray(y, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 8 or not np.isfinite(arr).all():
        raise DataValidationError(f"`y` must be a finite 1-D signal of at least 8 samples, got shape {arr.shape}")
    return np.asarray(np.abs(sp_signal.hilbert(arr - arr.mean())), dtype=np.float64)


def restoring_force(
    rec: Record, *, mass: float | None = None, mass_terms: str | Sequence[str] = MASS_TERMS
) -> RestoringForce:
    """Restoring force ``f − m·ẍ``: what the spring and damper carry.

    Parameters
    ----------
    rec : Record
        Needs ``v`` and ``a`` (measured or derived, e.g. by ``signals.derive_missing``).
    mass : float or None
        Mass (force unit · s² / displacement unit). Default: the mass parameter of the linear
        baseline (``m0``) from an equation-error fit of the terms ``mass_terms``.
    mass_terms : str or sequence of str
        Terms of the fit that estimates the mass when ``mass`` is None; must contain the baseline's
        mass term. The default ``MASS_TERMS`` adds the evidence terms to the linear baseline
        (``m0,c1,k1``): on a nonlinear record the purely linear fit biases the mass (for the
        ``seed`` example it gives 0.41 kg instead of 2 kg, which hides the cubic stiffness in the
        plot); pass the baseline terms for the linear fit. If that fit finds no positive mass, the
        linear fit is tried, and failing that the mass is 0 (``mass_source`` says so).

    Returns
    -------
    RestoringForce

    Raises
    ------
    DataValidationError
        The record has no ``a`` or ``v`` channel.
    ModelSpecError
        ``mass`` is not a positive finite number.
    """
    rec = _check_record(rec)
    for c in ("a", "v"):
        if getattr(rec, c) is None:
            raise DataValidationError(
                f"restoring force needs `{c}` ({CHANNEL_LABELS[c]}); record `{rec.name}` has none:"
                " derive it first (signals.derive_missing)"
            )
    name, term = baseline_parameter("mass"), mass_term()
    unit = TermModel(_LINEAR_TERMS).units(rec.unit("f"), rec.unit("x"))[name]
    if mass is None:
        try:
            model = TermModel(mass_terms)
        except ModelSpecError as exc:
            raise ModelSpecError(f"`mass_terms`: {exc}") from None
        if term not in model.terms:
            raise ModelSpecError(f"`mass_terms` must contain {term}, got {', '.join(model.terms)}")
        m = float(equation_error(rec, model).values[name])
        source = f"{name} of an equation-error fit ({', '.join(model.terms)})"
        if not (math.isfinite(m) and m > 0) and model.terms != _LINEAR_TERMS:
            m = float(equation_error(rec, TermModel(_LINEAR_TERMS)).values[name])
            source = f"{name} of a linear equation-error fit ({', '.join(_LINEAR_TERMS)})"
        if not (math.isfinite(m) and m > 0):
            m = 0.0
            source = f"no positive mass fits the data ({name} = 0): the restoring force is the measured force"
    else:
        m = _check_positive("mass", mass, unit)
        source = "given"
    force = rec.f - m * rec.channel("a")
    return RestoringForce(
        t=rec.t,
        x=rec.x,
        v=rec.channel("v"),
        force=np.asarray(force, dtype=np.float64),
        mass=m,
        mass_source=source,
        mass_unit=unit,
        units={c: rec.unit(c) for c in ("t", "x", "v", "f")},
        record=rec.name,
    )



def restoring_surface(rf: RestoringForce, *, nx: int = 25, nv: int = 25) -> RestoringSurface:
    """Bin the restoring force of ``rf`` on an ``nx`` × ``nv`` grid over the (x, ẋ) range it covers.

    Parameters
    ----------
    rf : RestoringForce
        From :func:`restoring_force`.
    nx, nv : int
        Cells along x and ẋ (5 to 200).
    """
    nx = _check_int("nx", nx, 5, 200)
    nv = _check_int("nv", nv, 5, 200)
    xe = np.linspace(float(rf.x.min()), float(rf.x.max()), nx + 1)
    ve = np.linspace(float(rf.v.min()), float(rf.v.max()), nv + 1)
    total, _, _ = np.histogram2d(rf.v, rf.x, bins=(ve, xe), weights=rf.force)
    count, _, _ = np.histogram2d(rf.v, rf.x, bins=(ve, xe))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return RestoringSurface(x_centers=0.5 * (xe[1:] + xe[:-1]), v_centers=0.5 * (ve[1:] + ve[:-1]), force=mean,
                            count=count.astype(np.int64), units=dict(rf.units))


def model_restoring_surface(surface: RestoringSurface, model: TermModel, theta: ArrayLike) -> FloatArray:
    """A model's restoring force (every term but inertia) at the cell centres of ``surface``.

    Evaluates ``model.restoring_force`` on the grid ``x_centers`` × ``v_centers``, so the fitted
    model can be drawn beside the measured cell means.

    Parameters
    ----------
    surface : RestoringSurface
        From :func:`restoring_surface`; its cell centres are the grid.
    model : TermModel
        The model whose force terms are evaluated.
    theta : (p,) array_like
        Parameter values in the model's order, settings such as ``v_eps`` included
        (e.g. ``FitResult.parameters.values``).

    Returns
    -------
    (nv, nx) ndarray
        Restoring force per cell (unit of f), laid out like ``surface.force``.

    Raises
    ------
    ModelSpecError
        ``theta`` does not hold one value per parameter of ``model``.
    """
    if not isinstance(surface, RestoringSurface):
        raise ModelSpecError(f"`surface` must be a RestoringSurface, got {type(surface).__name__}")
    values = np.asarray(theta, dtype=np.float64)
    if values.shape != (model.n_params,):
        raise ModelSpecError(
            f"`theta` must hold {model.n_params} values ({', '.join(model.param_names)}), got shape {values.shape}"
        )
    x_grid, v_grid = np.meshgrid(surface.x_centers, surface.v_centers)
    force = model.restoring_force(values, x_grid.ravel(), v_grid.ravel())
    return np.asarray(force, dtype=np.float64).reshape(x_grid.shape)
