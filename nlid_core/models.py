r"""The single-DOF grey-box model as a library of named terms.

The model is

.. math::

    \Big(\sum_{i\in\mathcal I}\theta_i\,\phi_i(x)\Big)\,\ddot x
    + \sum_{j\in\mathcal F}\theta_j\,\psi_j(x,\dot x) = f(t)

with inertia terms :math:`\mathcal I` (``m0``, ``m1``) and force terms
:math:`\mathcal F` (damping, friction, stiffness, offset). Every term is
linear in its coefficient, so the equation error is a linear least-squares
problem, and the acceleration

.. math:: \ddot x = \big(f - \textstyle\sum_j \theta_j\psi_j\big) / \sum_i\theta_i\phi_i

closes the state equations for simulation.

Term names are a public contract (CLI, files, UI):

====  =====================  ==========================================
name  force term             notes
====  =====================  ==========================================
m0    m0·ẍ                   linear inertia (> 0)
m1    m1·x²·ẍ                configuration-dependent inertia (>= 0)
c1    c1·ẋ                   viscous damping (>= 0)
c2    c2·|ẋ|·ẋ               quadratic damping (>= 0); never c2·ẋ²
fc    fc·tanh(ẋ/v_eps)       smoothed Coulomb friction (>= 0)
k1    k1·x                   linear stiffness
k2    k2·x²                  even quadratic stiffness (asymmetric spring)
k3    k3·x³                  Duffing stiffness (signed: < 0 softening)
kg    kg·dz(x, gap)          dead-zone spring: 0 for |x| <= gap
f0    f0                     constant force offset
====  =====================  ==========================================

Extending the model with terms that carry an internal state (LuGre
bristles, Bouc-Wen hysteresis) means adding states to the simulator kernel
behind the same :class:`TermModel` interface; estimators only use
``regressors`` (equation error, static terms) and the simulator's
sensitivities (output error), so they do not change.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .errors import ModelSpecError
from .params import Parameter, ParameterSet

__all__ = ["TermSpec", "TERMS", "TermModel", "ModelSettings", "parse_terms", "DEFAULT_TERMS"]

FloatArray = NDArray[np.float64]

INERTIA = "inertia"
FORCE = "force"


def _dz(x: FloatArray, gap: float) -> FloatArray:
    return np.where(np.abs(x) <= gap, 0.0, x - np.sign(x) * gap)


@dataclass(frozen=True)
class TermSpec:
    """Description of one library term.

    Attributes
    ----------
    name : str
        Public name.
    code : int
        Integer id used by the compiled simulator.
    kind : str
        ``"inertia"`` (multiplies ẍ) or ``"force"``.
    expr : str
        Readable force expression, e.g. ``k3·x³``.
    basis : str
        The regressor without its coefficient, e.g. ``x³`` (for equations).
    description : str
        One line for tables.
    x_power, t_power : int
        Unit of the coefficient is ``F · X^-x_power · s^t_power``.
    lower, upper : float
        Default bounds.
    regressor : callable
        ``(x, v, a, settings) -> column`` contribution per unit coefficient.
    """

    name: str
    code: int
    kind: str
    expr: str
    basis: str
    description: str
    x_power: int
    t_power: int
    lower: float
    upper: float
    regressor: Callable[[FloatArray, FloatArray, FloatArray, "ModelSettings"], FloatArray]

    def unit(self, force_unit: str = "N", x_unit: str = "m") -> str:
        """Unit of the coefficient for the given force and displacement units."""
        return compose_unit(force_unit, x_unit, self.x_power, self.t_power)


def compose_unit(force_unit: str, x_unit: str, x_power: int, t_power: int) -> str:
    """``F · X^-x_power · s^t_power`` as a readable string (F and X cancel when equal)."""
    num: list[str] = []
    den: list[str] = []

    def power(unit: str, e: int) -> str:
        return unit if e == 1 else f"{unit}^{e}"

    if force_unit == x_unit:
        e = 1 - x_power
        if e > 0:
            num.append(power(x_unit, e))
        elif e < 0:
            den.append(power(x_unit, -e))
    else:
        num.append(force_unit)
        if x_power:
            den.append(power(x_unit, x_power))
    if t_power:
        num.append(power("s", t_power))
    top = "·".join(num) if num else "1"
    return top if not den else f"{top}/{'·'.join(den)}"


TERMS: Mapping[str, TermSpec] = {
    t.name: t
    for t in (
        TermSpec("m0", 0, INERTIA, "m0·ẍ", "ẍ", "linear inertia (mass)", 1, 2, 0.0, math.inf,
                 lambda x, v, a, s: a),
        TermSpec("m1", 1, INERTIA, "m1·x²·ẍ", "x²·ẍ", "configuration-dependent inertia", 3, 2, 0.0, math.inf,
                 lambda x, v, a, s: x * x * a),
        TermSpec("c1", 2, FORCE, "c1·ẋ", "ẋ", "viscous damping", 1, 1, 0.0, math.inf,
                 lambda x, v, a, s: v),
        TermSpec("c2", 3, FORCE, "c2·|ẋ|·ẋ", "|ẋ|·ẋ", "quadratic damping", 2, 2, 0.0, math.inf,
                 lambda x, v, a, s: np.abs(v) * v),
        TermSpec("fc", 4, FORCE, "fc·tanh(ẋ/v_eps)", "tanh(ẋ/v_eps)", "smoothed Coulomb friction", 0, 0, 0.0,
                 math.inf, lambda x, v, a, s: np.tanh(v / s.v_eps)),
        TermSpec("k1", 5, FORCE, "k1·x", "x", "linear stiffness", 1, 0, -math.inf, math.inf,
                 lambda x, v, a, s: x),
        TermSpec("k2", 6, FORCE, "k2·x²", "x²", "even quadratic stiffness", 2, 0, -math.inf, math.inf,
                 lambda x, v, a, s: x * x),
        TermSpec("k3", 7, FORCE, "k3·x³", "x³", "cubic (Duffing) stiffness", 3, 0, -math.inf, math.inf,
                 lambda x, v, a, s: x * x * x),
        TermSpec("kg", 8, FORCE, "kg·dz(x, gap)", "dz(x)", "dead-zone (gap) spring", 1, 0, -math.inf, math.inf,
                 lambda x, v, a, s: _dz(x, s.gap)),
        TermSpec("f0", 9, FORCE, "f0", "1", "constant force offset", 0, 0, -math.inf, math.inf,
                 lambda x, v, a, s: np.ones_like(x)),
    )
}

#: The seed model: (m0 + m1·x²)·ẍ + c1·ẋ + c2·|ẋ|·ẋ + k1·x + k3·x³ = f.
DEFAULT_TERMS: tuple[str, ...] = ("m0", "m1", "c1", "c2", "k1", "k3")


@dataclass(frozen=True, kw_only=True)
class ModelSettings:
    """Term settings that are not estimated.

    Attributes
    ----------
    v_eps : float, m/s
        Velocity scale of the smoothed Coulomb term ``tanh(ẋ/v_eps)``.
    gap : float, m
        Half-width of the dead zone of the ``kg`` term.
    """

    v_eps: float = 1e-3
    gap: float = 0.0

    def __post_init__(self) -> None:
        if not (self.v_eps > 0 and math.isfinite(self.v_eps)):
            raise ModelSpecError(f"`v_eps` must be positive and finite, got {self.v_eps}")
        if not (self.gap >= 0 and math.isfinite(self.gap)):
            raise ModelSpecError(f"`gap` must be >= 0 and finite, got {self.gap}")


def parse_terms(terms: str | Iterable[str]) -> tuple[str, ...]:
    """Validate the names in ``terms`` (``"m0,c1,k1"`` or a sequence) into canonical order.

    Raises
    ------
    ModelSpecError
        Unknown or duplicated names, or an empty list.
    """
    names = [s.strip() for s in terms.split(",")] if isinstance(terms, str) else [str(s).strip() for s in terms]
    names = [n for n in names if n]
    if not names:
        raise ModelSpecError("`terms` is empty; choose from " + ", ".join(TERMS))
    unknown = [n for n in names if n not in TERMS]
    if unknown:
        raise ModelSpecError(f"unknown term(s) {', '.join(unknown)} in `terms`; valid terms are {', '.join(TERMS)}")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ModelSpecError(f"term(s) {', '.join(dup)} listed twice in `terms`")
    return tuple(n for n in TERMS if n in names)


class TermModel:
    """A single-DOF model built from library terms.

    Parameters
    ----------
    terms : str or sequence of str
        Term names (see the module table); stored in canonical order.
    settings : ModelSettings or None
        Non-estimated term settings.
    """

    def __init__(self, terms: str | Sequence[str] = DEFAULT_TERMS, settings: ModelSettings | None = None) -> None:
        self.terms: tuple[str, ...] = parse_terms(terms)
        self.settings = settings or ModelSettings()
        self.specs: tuple[TermSpec, ...] = tuple(TERMS[n] for n in self.terms)
        self.codes = np.array([s.code for s in self.specs], dtype=np.int64)

    def __repr__(self) -> str:
        return f"TermModel({','.join(self.terms)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TermModel) and (self.terms, self.settings) == (other.terms, other.settings)

    def __hash__(self) -> int:
        return hash((self.terms, self.settings))

    @property
    def param_names(self) -> tuple[str, ...]:
        return self.terms

    @property
    def n_params(self) -> int:
        return len(self.terms)

    @property
    def can_simulate(self) -> bool:
        """True when the model has the mass term ``m0`` (needed to solve for ẍ)."""
        return "m0" in self.terms

    def require_simulable(self) -> None:
        if not self.can_simulate:
            raise ModelSpecError(
                f"the model {', '.join(self.terms)} has no mass term `m0`, so it cannot be simulated;"
                " add m0 to the terms"
            )

    def inertia_mask(self) -> NDArray[np.bool_]:
        return np.array([s.kind == INERTIA for s in self.specs], dtype=bool)

    def units(self, force_unit: str = "N", x_unit: str = "m") -> dict[str, str]:
        return {s.name: s.unit(force_unit, x_unit) for s in self.specs}

    def default_parameters(
        self,
        values: Mapping[str, float] | None = None,
        *,
        force_unit: str = "N",
        x_unit: str = "m",
    ) -> ParameterSet:
        """Parameters with default bounds and units; values default to 1 for m0, else 0."""
        values = dict(values or {})
        unknown = set(values) - set(self.terms)
        if unknown:
            raise ModelSpecError(f"values given for term(s) {sorted(unknown)} not in the model {self.terms}")
        out = []
        for s in self.specs:
            v = float(values.get(s.name, 1.0 if s.name == "m0" else 0.0))
            out.append(
                Parameter(
                    name=s.name,
                    value=min(max(v, s.lower), s.upper),
                    lower=s.lower,
                    upper=s.upper,
                    unit=s.unit(force_unit, x_unit),
                    description=s.description,
                )
            )
        return ParameterSet(out)

    def regressors(self, x: FloatArray, v: FloatArray, a: FloatArray) -> FloatArray:
        """Regressor matrix Φ with ``Φ @ θ`` the model force.

        Parameters
        ----------
        x, v, a : (n,) ndarray
            Displacement, velocity, acceleration.

        Returns
        -------
        (n, n_params) ndarray
        """
        return np.column_stack([s.regressor(x, v, a, self.settings) for s in self.specs]).astype(np.float64)

    def force(self, theta: FloatArray, x: FloatArray, v: FloatArray, a: FloatArray) -> FloatArray:
        """Model force ``Σ θ_k · regressor_k`` (N)."""
        return self.regressors(x, v, a) @ np.asarray(theta, dtype=np.float64)

    def restoring_force(self, theta: FloatArray, x: FloatArray, v: FloatArray) -> FloatArray:
        """Force terms only (everything but inertia), i.e. f − M(x)·ẍ of the model."""
        zeros = np.zeros_like(x)
        phi = self.regressors(x, v, zeros)
        return phi @ np.where(self.inertia_mask(), 0.0, np.asarray(theta, dtype=np.float64))

    def equation(
        self,
        values: Mapping[str, float] | None = None,
        stderr: Mapping[str, float] | None = None,
        *,
        precision: int = 4,
    ) -> str:
        """Readable equation, symbolic or with values (and ± standard errors)."""

        def coef(name: str) -> str:
            if values is None:
                return name
            val = values[name]
            txt = f"{val:.{precision}g}"
            if stderr is not None and name in stderr and math.isfinite(stderr[name]):
                txt = f"({txt} ± {stderr[name]:.2g})"
            return txt

        inertia = [s for s in self.specs if s.kind == INERTIA]
        force = [s for s in self.specs if s.kind == FORCE]
        parts: list[str] = []
        if inertia:
            inner = " + ".join(coef(s.name) + ("" if s.name == "m0" else "·x²") for s in inertia)
            parts.append(f"({inner})·ẍ" if len(inertia) > 1 else f"{inner}·ẍ")
        for s in force:
            parts.append(coef(s.name) if s.basis == "1" else f"{coef(s.name)}·{s.basis}")
        return " + ".join(parts) + " = f(t)"
