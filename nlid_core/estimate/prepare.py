"""Data preparation shared by the estimators: record checks, derived channels, exact power-of-two scaling."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import DataValidationError, ModelSpecError
from ..models import TermModel
from ..params import ParameterSet
from ..record import Record
from .options import FloatArray

__all__ = ["DataScaling", "data_scaling", "coefficient_scales", "positive_mass", "MASS_FLOOR"]


def _check_records(records: Sequence[Record] | Record) -> tuple[Record, ...]:
    recs = (records,) if isinstance(records, Record) else tuple(records)
    if not recs:
        raise DataValidationError("no records given")
    for r in recs:
        if not isinstance(r, Record):
            raise DataValidationError(f"expected Record objects, got {type(r).__name__}")
        if r.n_dof > 1:
            raise DataValidationError(
                f"record `{r.name}` has {r.n_dof} degrees of freedom ({', '.join(r.channels)}); the single-DOF"
                " estimators need one (map one DOF's columns to t, f, x)"
            )
    fu = {r.unit("f") for r in recs}
    xu = {r.unit("x") for r in recs}
    if len(fu) > 1 or len(xu) > 1:
        raise DataValidationError(
            f"records use different units (force {sorted(fu)}, displacement {sorted(xu)}); convert them to one unit"
        )
    return recs


def _params_for(model: TermModel, recs: Sequence[Record], params: ParameterSet | None) -> ParameterSet:
    fu, xu = recs[0].unit("f"), recs[0].unit("x")
    if params is None:
        return model.default_parameters(force_unit=fu, x_unit=xu)
    if params.names != model.param_names:
        raise ModelSpecError(f"parameters {params.names} do not match the model terms {model.param_names}")
    return params


def _with_derivatives(rec: Record, differentiator: str) -> Record:
    if rec.v is not None and rec.a is not None:
        return rec
    from ..signals import derive_missing

    return derive_missing(rec, method=differentiator)


#: Largest power of two (about 1e271) by which a coefficient, or the sensitivity of the response to it, may
#: differ from 1 in the units of the data: beyond it the simulator's products under- or overflow.
_MAX_SCALE_EXP = 900
#: Displacement that varies by less than this fraction of its magnitude is constant up to rounding.
_CONSTANT_RTOL = 1e-13


def _exponent(value: float) -> int:
    """``e`` with ``2**(e - 1) <= value < 2**e`` (``value`` positive and finite): scaling by 2**-e is exact."""
    return math.frexp(value)[1]


def _data_scales(recs: Sequence[Record]) -> tuple[int, int]:
    """Binary exponents of the largest force and displacement, after checking the data carry information.

    Raises
    ------
    DataValidationError
        The force is zero (or below the normal floating-point range) in
        every record, or the displacement does not change in any record.
    """
    fu, xu = recs[0].unit("f"), recs[0].unit("x")
    amp = max(float(np.max(np.abs(r.f))) for r in recs)
    if amp == 0:
        raise DataValidationError("the force is zero in every record: nothing excites the system")
    if amp < np.finfo(np.float64).tiny:
        raise DataValidationError(
            f"the force is at most {amp:.3g} {fu} in every record, below the floating-point range:"
            " nothing measurable excites the system (or the force unit is wrong)"
        )
    lows, highs = [float(r.x.min()) for r in recs], [float(r.x.max()) for r in recs]  # no temporary |x| arrays
    xmax = max(max(hi, -lo) for lo, hi in zip(lows, highs, strict=True))
    moving = [hi - lo > _CONSTANT_RTOL * max(hi, -lo) for lo, hi in zip(lows, highs, strict=True)]
    if xmax == 0 or not any(moving):
        what = "is zero" if xmax == 0 else "is constant"
        raise DataValidationError(
            f"the displacement {what} in every record: the data carry no information about the dynamics"
        )
    if xmax < np.finfo(np.float64).tiny:
        raise DataValidationError(
            f"the displacement is at most {xmax:.3g} {xu} in every record, below the floating-point range:"
            " check the displacement unit"
        )
    return _exponent(amp), _exponent(xmax)


def _coefficient_exponents(model: TermModel, e_f: int, e_x: int) -> NDArray[np.int64]:
    """Per parameter, ``e`` with ``θ = θ̃ · 2**e`` for θ̃ the parameter in data of order one.

    A parameter of unit ``F^a · X^b · s^q`` scales as ``F^a · X^b`` (an unknown unit as 1).
    """
    fp, xp = model.force_and_length_powers
    return np.rint(fp * e_f + xp * e_x).astype(np.int64)


@dataclass(frozen=True, kw_only=True)
class DataScaling:
    r"""Exact power-of-two scaling of a model and its data to magnitudes of order one.

    Force is divided by :math:`2^{e_f}` and displacement, velocity and
    acceleration by :math:`2^{e_x}` (the powers of two just above the largest
    magnitudes), so regressors such as :math:`x^3` neither underflow for
    :math:`x \sim 10^{-100}` nor overflow. A coefficient then becomes
    :math:`\tilde\theta_k = \theta_k\,2^{-e_k}` with
    :math:`e_k = a_k e_f + b_k e_x` for a parameter of unit
    :math:`F^{a_k}\,X^{b_k}\,s^{q}` (settings such as ``v_eps`` and ``gap`` are
    parameters too, so they scale with the displacement), every term is
    homogeneous and the scaled problem has exactly the solution of the
    original one (powers of two lose nothing).

    Attributes
    ----------
    force_exp, x_exp : int
        :math:`e_f`, :math:`e_x`.
    exponents : (n_params,) int ndarray
        :math:`e_k` per model parameter.
    model : TermModel
        The model (its parameters are scaled by ``exponents``).
    """

    force_exp: int
    x_exp: int
    exponents: NDArray[np.int64]
    model: TermModel

    def regressors(self, rec: Record, theta: FloatArray | None = None) -> FloatArray:
        """Regressor matrix of ``rec`` (which must have ``v`` and ``a``) in scaled units; the non-linear
        parameters (``v_eps``, ``gap``, ...) at ``theta`` (data units) or at their defaults."""
        if theta is None:
            theta = self.model.default_parameters().values
        x, v, a = (rec.channel(c) for c in ("x", "v", "a"))
        return self.model.regressors(x, v, a, self.to_scaled(theta), input_exp=-self.x_exp)

    def force(self, f: FloatArray) -> FloatArray:
        """Force in scaled units."""
        return np.asarray(np.ldexp(f, -self.force_exp), dtype=np.float64)

    def to_scaled(self, theta: FloatArray) -> FloatArray:
        """Coefficients in scaled units (exact)."""
        return np.asarray(np.ldexp(theta, -self.exponents), dtype=np.float64)

    def from_scaled(self, theta_s: FloatArray) -> FloatArray:
        """Coefficients in the data's units (exact; ``inf`` beyond floating point)."""
        with np.errstate(over="ignore", under="ignore"):
            return np.asarray(np.ldexp(theta_s, self.exponents), dtype=np.float64)


def data_scaling(model: TermModel, records: Sequence[Record] | Record) -> DataScaling:
    """The :class:`DataScaling` of ``model`` for ``records``.

    Parameters
    ----------
    model : TermModel
    records : Record or sequence of Record

    Returns
    -------
    DataScaling

    Raises
    ------
    DataValidationError
        The data carry no information: the force is zero in every record, or
        the displacement does not change in any record.
    """
    recs = _check_records(records)
    e_f, e_x = _data_scales(recs)
    # settings such as v_eps are parameters: scaled with the others through their units
    return DataScaling(force_exp=e_f, x_exp=e_x, exponents=_coefficient_exponents(model, e_f, e_x), model=model)


def coefficient_scales(model: TermModel, records: Sequence[Record] | Record) -> dict[str, float]:
    """Typical magnitude of each coefficient in the units of ``records``.

    A coefficient with unit ``F · X^-p · s^q`` is of order ``F / X^p`` with
    F and X the largest force and displacement (rounded up to powers of two);
    scale-free thresholds (a small positive start for a mass on its bound 0,
    say) are fractions of these.

    Parameters
    ----------
    model : TermModel
    records : Record or sequence of Record

    Returns
    -------
    dict
        Term name -> magnitude (``inf`` or 0 beyond floating point).
    """
    mags = data_scaling(model, records).from_scaled(np.ones(model.n_params))
    return {n: float(v) for n, v in zip(model.param_names, mags, strict=True)}


#: A mass on its bound 0 is restarted at this fraction of the mass scale (see ``coefficient_scales``).
MASS_FLOOR = 1e-12


def positive_mass(params: ParameterSet, model: TermModel, records: Sequence[Record] | Record) -> ParameterSet:
    """``params`` with the mass (``m0``) moved off zero (a start at zero mass cannot be simulated), relative
    to the data's units."""
    mass = model.mass_parameter
    if mass is None or mass not in params.names or params[mass].value > 0:
        return params
    floor = MASS_FLOOR * coefficient_scales(model, records)[mass]
    return params.update(mass, value=min(floor, params[mass].upper))


def _check_scales(model: TermModel, params: ParameterSet, recs: Sequence[Record], *, simulate: bool,
                  scaling: DataScaling | None = None) -> None:
    """Refuse units in which a free coefficient (or, to simulate, the response's sensitivity to it) leaves
    floating point: the coefficient is about ``2**e`` and its sensitivity about ``X / 2**e``. ``scaling``:
    the records' :class:`DataScaling`, if the caller has it already."""
    e_f, e_x = (scaling.force_exp, scaling.x_exp) if scaling is not None else _data_scales(recs)
    exps = _coefficient_exponents(model, e_f, e_x)

    def dec(e: int) -> str:
        return f"1e{int(round(e * math.log10(2))):+d}"

    coef, sens = [], []
    for name, e, free in zip(model.param_names, (int(v) for v in exps), params.free_mask, strict=True):
        if not free:
            continue
        if abs(e) > _MAX_SCALE_EXP:
            coef.append(f"{name} ~{dec(e)} {params[name].unit}")
        elif simulate and abs(e_x - e) > _MAX_SCALE_EXP:
            sens.append(f"to {name} ~{dec(e_x - e)}")
    if not (coef or sens):
        return
    amp = max(float(np.max(np.abs(r.f))) for r in recs)
    xmax = max(float(np.max(np.abs(r.x))) for r in recs)
    what = []
    if coef:
        what.append(f"coefficients ({', '.join(coef)})")
    if sens:
        what.append(f"sensitivities of the response ({', '.join(sens)})")
    raise DataValidationError(
        f"forces up to {amp:.3g} {recs[0].unit('f')} and displacements up to {xmax:.3g} {recs[0].unit('x')} give "
        + " and ".join(what) + " too close to the limits of floating point (1e±308) to "
        + ("simulate" if simulate else "estimate") + "; express the force or the displacement in another unit"
        " (e.g. --units x=mm)"
    )
