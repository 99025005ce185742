r"""Units of term parameters and states, as exponents of force, displacement and time.

A unit is ``F^f · X^x · s^t`` with F the record's force unit (N, or V for a circuit), X its
displacement unit (m, or V) and s seconds; :class:`Dim` holds the three exponents (fractions are
allowed). :func:`format_unit` writes it for given F and X (merging them when they are the same unit,
as for voltage records); :func:`infer_units` derives the units of the parameters of a force
expression typed by a user from the rule that the force has the unit F: every sum's terms share a
unit, ``tanh``/``exp``/``log``/``sin``/``cos`` take dimensionless arguments, powers scale
exponents. A parameter the rules cannot pin down gets no unit (``None``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

__all__ = ["Dim", "FORCE", "DISPLACEMENT", "VELOCITY", "ACCELERATION", "DIMENSIONLESS", "format_unit", "infer_units"]


@dataclass(frozen=True)
class Dim:
    """Exponents of force (``f``), displacement (``x``) and time (``t``)."""

    f: Fraction = Fraction(0)
    x: Fraction = Fraction(0)
    t: Fraction = Fraction(0)

    @staticmethod
    def of(f: float | Fraction = 0, x: float | Fraction = 0, t: float | Fraction = 0) -> Dim:
        """Build from numbers (converted to exact fractions)."""
        return Dim(Fraction(f).limit_denominator(1000), Fraction(x).limit_denominator(1000),
                   Fraction(t).limit_denominator(1000))

    def __add__(self, o: Dim) -> Dim:
        return Dim(self.f + o.f, self.x + o.x, self.t + o.t)

    def __sub__(self, o: Dim) -> Dim:
        return Dim(self.f - o.f, self.x - o.x, self.t - o.t)

    def scale(self, k: Fraction) -> Dim:
        """Every exponent times ``k``."""
        return Dim(self.f * k, self.x * k, self.t * k)

    @property
    def dimensionless(self) -> bool:
        """True when every exponent is zero."""
        return self.f == 0 and self.x == 0 and self.t == 0


FORCE = Dim.of(f=1)
DISPLACEMENT = Dim.of(x=1)
VELOCITY = Dim.of(x=1, t=-1)
ACCELERATION = Dim.of(x=1, t=-2)
DIMENSIONLESS = Dim()


def _power(unit: str, e: Fraction) -> str:
    if e == 1:
        return unit
    txt = str(e.numerator) if e.denominator == 1 else f"({e})"
    return f"{unit}^{txt}"


@lru_cache(maxsize=4096)
def format_unit(dim: Dim | None, force_unit: str = "N", x_unit: str = "m") -> str:
    """``dim`` as a readable unit, e.g. ``N/m^3``, ``N·s^2/m``, ``s^2`` (volts over volts), ``1``.

    Parameters
    ----------
    dim : Dim or None
        Exponents; None (unknown) is written ``?``.
    force_unit, x_unit : str
        The record's force and displacement units.
    """
    if dim is None:
        return "?"
    parts: list[tuple[str, Fraction]] = []
    if force_unit == x_unit:
        parts.append((x_unit, dim.f + dim.x))
    else:
        parts += [(force_unit, dim.f), (x_unit, dim.x)]
    parts.append(("s", dim.t))
    num = [_power(u, e) for u, e in parts if e > 0]
    den = [_power(u, -e) for u, e in parts if e < 0]
    top = "·".join(num) if num else "1"
    return top if not den else f"{top}/{'·'.join(den)}"


def infer_units(force: Any, known: Mapping[Any, Dim], unknown: set[Any], target: Dim = FORCE) -> dict[Any, Dim]:
    """Units of the ``unknown`` symbols of ``force`` (which has the unit ``target``).

    Parameters
    ----------
    force : sympy.Expr
        The term's force (or any expression whose unit is ``target``).
    known : mapping of sympy.Symbol to Dim
        Units of the variables (x, v, a, states) and of parameters already known.
    unknown : set of sympy.Symbol
        Parameters to solve for.
    target : Dim
        The unit of ``force`` (default: force).

    Returns
    -------
    dict
        The symbols whose unit follows from the rules; the others are absent.
    """
    import sympy

    found: dict[Any, Dim] = {}
    funcs = (sympy.tanh, sympy.exp, sympy.log, sympy.sin, sympy.cos)

    def dim(e: Any) -> Dim | None:
        if e.is_Number or isinstance(e, sympy.NumberSymbol):
            return DIMENSIONLESS
        if e.is_Symbol:
            return known.get(e, found.get(e))
        if isinstance(e, sympy.Add) or isinstance(e, (sympy.Min, sympy.Max)):
            for arg in e.args:
                d = dim(arg)
                if d is not None:
                    return d
            return None
        if isinstance(e, sympy.Mul):
            total = DIMENSIONLESS
            for arg in e.args:
                d = dim(arg)
                if d is None:
                    return None
                total = total + d
            return total
        if isinstance(e, sympy.Pow):
            base, ex = e.args
            d = dim(base)
            if d is None:
                return None
            if ex.is_Number:
                return d.scale(Fraction(str(sympy.nsimplify(ex))))
            return DIMENSIONLESS if d.dimensionless else None
        if isinstance(e, sympy.Abs):
            return dim(e.args[0])
        if isinstance(e, (sympy.sign, sympy.Heaviside)) or isinstance(e, funcs):
            return DIMENSIONLESS
        return None

    def require(e: Any, d: Dim) -> None:
        if e.is_Symbol:
            if e in unknown and e not in found:
                found[e] = d
            return
        if isinstance(e, sympy.Add) or isinstance(e, (sympy.Min, sympy.Max)):
            for arg in e.args:
                require(arg, d)
        elif isinstance(e, sympy.Mul):
            dims = [dim(arg) for arg in e.args]
            open_args = [arg for arg, di in zip(e.args, dims, strict=True) if di is None]
            if len(open_args) == 1:
                rest = DIMENSIONLESS
                for di in dims:
                    if di is not None:
                        rest = rest + di
                require(open_args[0], d - rest)
        elif isinstance(e, sympy.Pow):
            base, ex = e.args
            if ex.is_Number and ex != 0:
                require(base, d.scale(1 / Fraction(str(sympy.nsimplify(ex)))))
        elif isinstance(e, sympy.Abs):
            require(e.args[0], d)

    def arguments(e: Any) -> None:
        if isinstance(e, funcs) or (isinstance(e, sympy.Pow) and not e.args[1].is_Number):
            inner = e.args[0] if isinstance(e, funcs) else e.args[1]
            require(inner, DIMENSIONLESS)
        for arg in e.args:
            arguments(arg)

    for _ in range(3):
        arguments(force)
        require(force, target)
    return found
