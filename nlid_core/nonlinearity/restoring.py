r"""Restoring force :math:`f - m\ddot x`: what the spring and damper carry.

Plotted against ``x`` or ``ẋ`` (or averaged over a grid of both, :func:`restoring_surface`) it
shows the shape of the stiffness and damping curves directly. The mass, unless given, comes from
an equation-error fit that includes the common nonlinear terms (a purely linear fit biases it on a
nonlinear record).

On broadband data the points fill the (x, ẋ) plane and a scatter plot is a cloud; the surface
method of Masri & Caughey reads it through *slices*: near ``ẋ = 0`` the restoring force is the
stiffness curve ``k(x)``, near ``x = 0`` the damping curve ``c(ẋ)``. :func:`restoring_slices` bins
each slice and fits low-order polynomials to the bin means: a significant cubic term in ``k(x)``
is a cubic spring (``k3``), a quadratic one an asymmetric spring (``k2``), a significant
``|ẋ|ẋ`` term in ``c(ẋ)`` quadratic damping (``c2``).

References
----------
S.F. Masri and T.K. Caughey, "A nonparametric identification technique for nonlinear dynamic
problems", *Journal of Applied Mechanics* 46(2), 433–447, 1979, doi:10.1115/1.3424568.
K. Worden and G.R. Tomlinson, *Nonlinearity in Structural Dynamics*, IOP, 2001, ch. 7.
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
    "RestoringSlice",
    "RestoringSlices",
    "restoring_slices",
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


@dataclass(frozen=True, kw_only=True)
class RestoringSlice:
    """Restoring force along one slice of the (x, ẋ) plane, binned, with a polynomial fit.

    Attributes
    ----------
    against : str
        ``"x"`` (the slice ``|ẋ|`` small: the stiffness curve) or ``"v"`` (``|x|`` small: damping).
    centers, mean, stderr : (k,) ndarray
        Bin centres (unit of ``against``), mean restoring force and its standard error (unit of f).
    count : (k,) ndarray
        Samples per bin.
    basis : tuple of str
        Fitted functions, e.g. ``("x", "x²", "x³")`` or ``("ẋ", "|ẋ|ẋ")`` (plus a constant).
    coef, coef_se : (p,) ndarray
        Least-squares coefficients of ``basis`` (weighted by the bin counts) and their standard
        errors; the constant is not reported.
    share : (p,) ndarray
        Each term's force at the slice's largest |abscissa| over the linear term's force there.
    n_samples : int
    width : float
        Half-width of the slice in the other variable (unit of that variable).
    offset : float
        The fit's constant (unit of f).
    """

    against: str
    centers: FloatArray
    mean: FloatArray
    stderr: FloatArray
    count: NDArray[np.int64]
    basis: tuple[str, ...]
    coef: FloatArray
    coef_se: FloatArray
    share: FloatArray
    n_samples: int
    width: float
    offset: float = 0.0

    def curve(self, at: FloatArray) -> FloatArray:
        """The fitted polynomial (constant included) at abscissae ``at`` (unit of f).

        Parameters
        ----------
        at : ndarray
            Abscissae (unit of ``against``).
        """
        a = np.asarray(at, dtype=np.float64)
        cols = [a, a**2, a**3] if self.against == "x" else [a, np.abs(a) * a]
        return np.asarray(self.offset + sum(c * v for c, v in zip(self.coef, cols)), dtype=np.float64)

    def significant(self, term: str, z: float = 3.0) -> bool:
        """``|coef| > z·stderr`` for ``term`` (one of ``basis``)."""
        i = self.basis.index(term)
        return bool(math.isfinite(self.coef_se[i]) and abs(self.coef[i]) > z * self.coef_se[i])


@dataclass(frozen=True, kw_only=True)
class RestoringSlices:
    """The stiffness slice (ẋ ≈ 0) and damping slice (x ≈ 0) of a restoring force.

    Attributes
    ----------
    stiffness, damping : RestoringSlice or None
        None when too few samples fall in the slice.
    units : mapping
    record : str
    """

    stiffness: RestoringSlice | None
    damping: RestoringSlice | None
    units: Mapping[str, str]
    record: str = ""

    def findings(self, min_share: float = 0.05) -> tuple[str, ...]:
        """Plain-language reading of the curvature of the two slices.

        Parameters
        ----------
        min_share : float
            A nonlinear term counts when it is significant (3 standard errors) and its force at the
            slice's edge is at least this fraction of the linear term's.
        """
        out: list[str] = []
        for sl, terms in ((self.stiffness, (("x³", "cubic stiffness (k3)"), ("x²", "asymmetric spring (k2)"))),
                          (self.damping, (("|ẋ|ẋ", "quadratic damping (c2)"),))):
            if sl is None:
                continue
            what = "stiffness curve (slice ẋ ≈ 0)" if sl.against == "x" else "damping curve (slice x ≈ 0)"
            for b, name in terms:
                i = sl.basis.index(b)
                if sl.significant(b) and abs(sl.share[i]) >= min_share:
                    sign = ""
                    if b == "x³":
                        sign = ", hardening" if sl.coef[i] > 0 else ", softening"
                    if b == "|ẋ|ẋ" and sl.coef[i] < 0:
                        name = "a damping force that levels off with speed: dry friction (fc) rather than c2"
                    out.append(f"the restoring force's {what} bends: its {b} term reaches {100 * sl.share[i]:+.0f} % of"
                               f" the linear term at the slice's edge ({abs(sl.coef[i]) / sl.coef_se[i]:.0f} standard"
                               f" errors from zero, {sl.n_samples} samples){sign}: {name}")
        return tuple(out)


def _slice(along: FloatArray, force: FloatArray, sel: NDArray[np.bool_], against: str, nbins: int,
           width: float) -> RestoringSlice | None:
    a, f = along[sel], force[sel]
    if a.size < 4 * nbins:
        return None
    lim = float(np.max(np.abs(a)))
    edges = np.linspace(-lim, lim, nbins + 1)
    idx = np.clip(np.digitize(a, edges) - 1, 0, nbins - 1)
    count = np.bincount(idx, minlength=nbins)
    total = np.bincount(idx, weights=f, minlength=nbins)
    sq = np.bincount(idx, weights=f * f, minlength=nbins)
    keep = count >= 3
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        var = np.where(count > 1, (sq - count * mean**2) / np.maximum(count - 1, 1), np.nan)
        se = np.sqrt(np.maximum(var, 0.0) / np.maximum(count, 1))
    centers = 0.5 * (edges[1:] + edges[:-1])
    basis: tuple[str, ...]
    if against == "x":
        basis = ("x", "x²", "x³")
        cols = [centers, centers**2, centers**3]
    else:
        basis = ("ẋ", "|ẋ|ẋ")
        cols = [centers, np.abs(centers) * centers]
    p = len(basis)
    if keep.sum() < p + 3:
        return None
    # weighted least squares on the bin means (weights 1/se², from the spread within each bin)
    good = keep & np.isfinite(se) & (se > 0)
    if good.sum() < p + 3:
        return None
    w = 1.0 / se[good]
    design = np.column_stack([np.ones(int(good.sum())), *[c[good] for c in cols]]) * w[:, None]
    rhs = mean[good] * w
    coef_all, _, rank, _ = np.linalg.lstsq(design, rhs, rcond=None)
    dof = int(good.sum()) - (p + 1)
    resid = rhs - design @ coef_all
    scale = max(float(resid @ resid) / dof, 1.0) if dof > 0 else 1.0  # bins scattered beyond their se widen it
    try:
        cov = np.linalg.inv(design.T @ design) * scale
        coef_se = np.sqrt(np.maximum(np.diag(cov)[1:], 0.0))
    except np.linalg.LinAlgError:
        coef_se = np.full(p, np.inf)
    coef = coef_all[1:]
    edge = [lim, lim**2, lim**3] if against == "x" else [lim, lim * lim]
    lin = coef[0] * edge[0]
    share = np.array([c * e / lin if lin != 0 else math.nan for c, e in zip(coef, edge)])
    return RestoringSlice(against=against, centers=centers, mean=mean, stderr=se, count=count.astype(np.int64),
                          basis=basis, coef=np.asarray(coef, dtype=np.float64), coef_se=coef_se, share=share,
                          n_samples=int(a.size), width=width, offset=float(coef_all[0]))


def restoring_slices(rf: RestoringForce, *, fraction: float = 0.1, nbins: int = 25) -> RestoringSlices:
    """Bin the restoring force along the slices ``|ẋ| < fraction·max|ẋ|`` and ``|x| < fraction·max|x|``.

    Parameters
    ----------
    rf : RestoringForce
        From :func:`restoring_force`.
    fraction : float
        Half-width of each slice as a fraction of the other variable's largest magnitude (0 < f <= 0.5).
    nbins : int
        Bins along each slice (8 to 200).

    Returns
    -------
    RestoringSlices
        Each slice binned (mean, standard error per bin) and fitted with ``x, x², x³`` (stiffness)
        or ``ẋ, |ẋ|ẋ`` (damping) plus a constant; a slice with fewer than ``4·nbins`` samples is None.
    """
    if not isinstance(rf, RestoringForce):
        raise ModelSpecError(f"`rf` must be a RestoringForce, got {type(rf).__name__}")
    try:
        frac = float(fraction)
    except (TypeError, ValueError):
        raise ModelSpecError(f"`fraction` must be a number in (0, 0.5], got {fraction!r}") from None
    if not 0 < frac <= 0.5:
        raise ModelSpecError(f"`fraction` must be in (0, 0.5], got {fraction!r}")
    nbins = _check_int("nbins", nbins, 8, 200)
    x = rf.x - float(np.mean(rf.x))
    v = rf.v - float(np.mean(rf.v))
    vw = frac * float(np.max(np.abs(v)))
    xw = frac * float(np.max(np.abs(x)))
    stiff = _slice(x, rf.force, np.abs(v) < vw, "x", nbins, vw)
    damp = _slice(v, rf.force, np.abs(x) < xw, "v", nbins, xw)
    return RestoringSlices(stiffness=stiff, damping=damp, units=dict(rf.units), record=rf.record)
