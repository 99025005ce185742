r"""Excited lines and detection lines of a periodic (multisine) excitation.

A multisine excites only some DFT lines ``k`` of its period (``f_k = k·fs/N``). A linear system
answers only at those lines; at every other line its output spectrum holds noise alone. A
nonlinear system also puts energy at unexcited lines, and *which* unexcited lines tell the kind of
nonlinearity when the input is an odd multisine (only odd lines excited):

* products of an even number of odd lines (``x²``, ``|ẋ|ẋ`` expanded, an asymmetric spring ``k2``,
  an offset) fall on **even** lines;
* products of an odd number of odd lines (``x³``: a cubic spring ``k3``, the odd part of quadratic
  damping ``c2``, friction) fall on **odd** lines — so the odd lines left out of a *random-odd*
  multisine ("detection lines"), and the odd lines above the excited band, show odd-degree
  distortion.

Each class of unexcited lines is compared with the output's noise level at the same lines (from
the spread over periods, or from the overlap of a transient with the period, see :mod:`.bla`):
a class more than ``DETECTION_DB`` above the noise, with enough lines for the difference to be
significant, is nonlinear distortion.

References
----------
R. Pintelon and J. Schoukens, *System Identification: A Frequency Domain Approach*, 2nd ed.,
Wiley-IEEE Press, 2012, ch. 3 (odd and random-odd multisines, detection lines) and ch. 4.
J. Schoukens, R. Pintelon, T. Dobrowiecki and Y. Rolain, "Identification of linear systems with
nonlinear distortions", *Automatica* 41(3), 491–504, 2005, doi:10.1016/j.automatica.2004.10.004.
J. Schoukens, J. Swevers, R. Pintelon and H. Van der Auweraer, "Excitation design for FRF
measurements in the presence of non-linear distortions", *Mechanical Systems and Signal
Processing* 18(4), 727–738, 2004, doi:10.1016/S0888-3270(03)00084-0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import DataValidationError
from ._args import FloatArray
from .thresholds import DETECTION_DB, EXCITED_DB, EXCITED_SNR_DB

__all__ = ["LineClass", "DetectionLines", "excited_lines", "input_kind", "detection_lines"]

BoolArray = NDArray[np.bool_]


@dataclass(frozen=True, kw_only=True)
class LineClass:
    """Output level at one class of unexcited lines, against the noise at the same lines.

    Attributes
    ----------
    name : str
        ``"odd lines in band"``, ``"even lines above band"`` etc.
    parity : str
        ``"odd"``, ``"even"`` or ``"any"``.
    region : str
        ``"in band"`` (between the lowest and highest excited line) or ``"above band"``.
    n_lines : int
        Lines in the class (per realisation).
    level : float
        Mean output power per line at these lines (output unit squared, amplitude spectrum:
        a sine of amplitude A gives A²).
    noise : float
        Mean noise power per line at these lines (NaN when the noise is unknown).
    above_noise_db : float
        ``10·log10(level / noise)`` (NaN when the noise is unknown).
    significant : bool
        The class stands out of the noise: ``above_noise_db > DETECTION_DB`` and the difference
        exceeds five standard deviations of a mean of ``n_lines × realisations`` noise powers.
    """

    name: str
    parity: str
    region: str
    n_lines: int
    level: float
    noise: float
    above_noise_db: float
    significant: bool


@dataclass(frozen=True, kw_only=True)
class DetectionLines:
    """Output energy at the unexcited lines of a periodic excitation.

    Attributes
    ----------
    input_kind : str
        ``"odd"`` (only odd lines excited, every odd line of the band), ``"random-odd"`` (only odd
        lines, some left out as detection lines), ``"full"`` (even and odd lines) or ``"none"``.
    classes : tuple of LineClass
        The unexcited lines by parity (odd/even for odd inputs, ``any`` otherwise) and region.
    excited_level : float
        Mean output power per excited line (output unit squared).
    noise_known : bool
    """

    input_kind: str
    classes: tuple[LineClass, ...]
    excited_level: float
    noise_known: bool

    def get(self, parity: str, region: str) -> LineClass | None:
        """The class of ``parity`` (``odd``, ``even``, ``any``) and ``region`` (``in band``, ``above band``)."""
        for c in self.classes:
            if c.parity == parity and c.region == region:
                return c
        return None

    def odd_distortion(self) -> LineClass | None:
        """The significant odd class with the highest level above noise (odd inputs only), or None."""
        return self._strongest("odd")

    def even_distortion(self) -> LineClass | None:
        """The significant even class with the highest level above noise (odd inputs only), or None."""
        return self._strongest("even")

    def any_distortion(self) -> LineClass | None:
        """The significant class (any parity) with the highest level above noise, or None."""
        return self._strongest(None)

    def _strongest(self, parity: str | None) -> LineClass | None:
        hits = [c for c in self.classes if c.significant and (parity is None or c.parity == parity)]
        return max(hits, key=lambda c: c.above_noise_db) if hits else None


def excited_lines(u_power: FloatArray, u_noise: FloatArray | None = None) -> BoolArray:
    """Lines of a period that the input excites.

    A line is excited when its power is within ``-EXCITED_DB`` dB of the strongest line and, when
    the input's noise power per line is known, ``EXCITED_SNR_DB`` above it. Line 0 (DC) never counts.

    Parameters
    ----------
    u_power : (m,) ndarray
        Input power per DFT line of one period (averaged over realisations).
    u_noise : (m,) ndarray or None
        Noise power per line of the same averaged spectrum.

    Returns
    -------
    (m,) bool ndarray
    """
    p = np.asarray(u_power, dtype=np.float64)
    if p.ndim != 1 or p.size < 2 or not np.isfinite(p).all():
        raise DataValidationError(f"`u_power` must be a finite 1-D array of at least 2 lines, got shape {p.shape}")
    top = float(np.max(p[1:]))
    if not top > 0:
        return np.zeros(p.size, dtype=bool)
    ex = p > top * 10 ** (EXCITED_DB / 10)
    if u_noise is not None:
        noise = np.asarray(u_noise, dtype=np.float64)
        if noise.shape == p.shape and np.isfinite(noise).all():
            ex &= p > noise * 10 ** (EXCITED_SNR_DB / 10)
    ex[0] = False
    return np.asarray(ex, dtype=bool)


def input_kind(excited: BoolArray) -> str:
    """``"odd"``, ``"random-odd"``, ``"full"`` or ``"none"``: which lines a multisine excites.

    Odd: only odd lines, and every odd line between the lowest and highest excited one (at most 2 %
    missing, e.g. a line lost in the noise). Random-odd: only odd lines, more of them left out.
    Full: even lines excited too (a full or random-full multisine; detection lines then cannot tell
    odd from even nonlinearity).
    """
    idx = np.flatnonzero(excited)
    if idx.size == 0:
        return "none"
    if np.any(idx % 2 == 0):
        return "full"
    odd_span = (idx[-1] - idx[0]) // 2 + 1
    return "odd" if idx.size >= 0.98 * odd_span else "random-odd"


def _class(name: str, parity: str, region: str, sel: BoolArray, y_power: FloatArray, y_noise: FloatArray | None,
           n_real: int) -> LineClass | None:
    n = int(sel.sum())
    if n == 0:
        return None
    level = float(np.mean(y_power[sel]))
    noise = math.nan
    above = math.nan
    significant = False
    if y_noise is not None:
        noise = float(np.mean(y_noise[sel]))
        if noise > 0 and level > 0:
            above = 10 * math.log10(level / noise)
            # a mean of n·M exponential noise powers has relative standard deviation 1/sqrt(n·M)
            margin = 1 + 5 / math.sqrt(n * max(n_real, 1))
            significant = above > DETECTION_DB and level > margin * noise
    return LineClass(name=name, parity=parity, region=region, n_lines=n, level=level, noise=noise,
                     above_noise_db=above, significant=significant)


def detection_lines(
    excited: BoolArray, y_power: FloatArray, y_noise: FloatArray | None, *, n_realisations: int = 1,
    ignore: BoolArray | None = None,
) -> DetectionLines:
    """Output level at the unexcited lines of a periodic excitation, by parity and region.

    Parameters
    ----------
    excited : (m,) bool ndarray
        Excited lines (:func:`excited_lines`), lines ``0 .. N/2`` of one period.
    y_power : (m,) ndarray
        Output power per line (averaged over periods, then the power averaged over realisations).
    y_noise : (m,) ndarray or None
        Noise power per line of the same spectrum (None when unknown: no class is then significant).
    n_realisations : int
        Realisations averaged into ``y_power`` (sets the significance margin).
    ignore : (m,) bool ndarray or None
        Lines left out of every class (e.g. excited in some realisations only).

    Returns
    -------
    DetectionLines
        Classes: unexcited odd and even lines inside the excited band and above it (odd inputs), or
        unexcited lines of any parity (full multisines). Lines above 0.95 × Nyquist are left out
        (anti-alias filters shape them).
    """
    ex = np.asarray(excited, dtype=bool)
    yp = np.asarray(y_power, dtype=np.float64)
    yn = None if y_noise is None else np.asarray(y_noise, dtype=np.float64)
    if yp.shape != ex.shape or (yn is not None and yn.shape != ex.shape):
        raise DataValidationError("`excited`, `y_power` and `y_noise` must have the same shape")
    kind = input_kind(ex)
    if kind == "none":
        return DetectionLines(input_kind=kind, classes=(), excited_level=math.nan, noise_known=yn is not None)
    k = np.arange(ex.size)
    idx = np.flatnonzero(ex)
    lo, hi = int(idx[0]), int(idx[-1])
    top = int(0.95 * (ex.size - 1))
    unexc = ~ex & (k > 0)
    if ignore is not None:
        unexc &= ~np.asarray(ignore, dtype=bool)
    in_band = unexc & (k >= lo) & (k <= hi)
    above = unexc & (k > hi) & (k <= top)
    classes: list[LineClass | None] = []
    if kind in ("odd", "random-odd"):
        odd, even = k % 2 == 1, k % 2 == 0
        classes += [
            _class("odd lines in band (detection lines)", "odd", "in band", in_band & odd, yp, yn, n_realisations),
            _class("even lines in band", "even", "in band", in_band & even, yp, yn, n_realisations),
            _class("odd lines above band", "odd", "above band", above & odd, yp, yn, n_realisations),
            _class("even lines above band", "even", "above band", above & even, yp, yn, n_realisations),
        ]
    else:
        classes += [
            _class("unexcited lines in band", "any", "in band", in_band, yp, yn, n_realisations),
            _class("lines above band", "any", "above band", above, yp, yn, n_realisations),
        ]
    return DetectionLines(input_kind=kind, classes=tuple(c for c in classes if c is not None),
                          excited_level=float(np.mean(yp[ex])), noise_known=yn is not None)
