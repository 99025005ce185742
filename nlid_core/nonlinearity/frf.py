"""Frequency response (H1) from force to a response channel, with the coherence.

Overlaid for records at several excitation levels, a shifting resonance or a changing damping shows
that the system is nonlinear; a coherence well below 1 inside the excitation band says the same
for one record (or that the response is noisy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import signal as sp_signal

from ..errors import ModelSpecError
from ..record import Record
from ._args import (
    ComplexArray,
    FloatArray,
    _check_channel,
    _check_nperseg,
    _check_record,
    _ratio_unit,
    _spectral_window,
    _unwrapped_deg,
)
from .spectra import _band_or_nan
from .thresholds import MIN_COHERENCE

__all__ = ["FRF", "frf"]


@dataclass(frozen=True, kw_only=True)
class FRF:
    """H1 frequency response estimate from force to a response channel.

    Attributes
    ----------
    freq_hz : (m,) ndarray
    h : (m,) complex ndarray
        ``P_fy / P_ff`` (the response per unit force; NaN where the force has no power).
    coherence : (m,) ndarray
        ``|P_fy|² / (P_ff P_yy)`` in [0, 1] (identically 1 with a single Welch segment).
    unit : str
        Unit of ``h``, e.g. ``m/N``.
    record : str
    output : str
        Response channel (``x`` by default).
    nperseg : int
    band_hz : (float, float)
        Excitation band (see :func:`excitation_band`): outside it ``h`` is noise over noise.
    """

    freq_hz: FloatArray
    h: ComplexArray
    coherence: FloatArray
    unit: str = "m/N"
    record: str = ""
    output: str = "x"
    nperseg: int = 0
    band_hz: tuple[float, float] = (math.nan, math.nan)

    @property
    def magnitude_db(self) -> FloatArray:
        """``20 log10 |h|`` (dB re 1 ``unit``)."""
        mag = np.abs(self.h)
        with np.errstate(divide="ignore"):
            return np.where(mag > 0, 20.0 * np.log10(np.where(mag > 0, mag, 1.0)), -np.inf)

    @property
    def phase_deg(self) -> FloatArray:
        """Unwrapped phase of ``h`` in degrees (NaN where ``h`` is undefined)."""
        ok = np.isfinite(self.h)
        out = np.full(self.h.shape, np.nan)
        if ok.any():
            out[ok] = _unwrapped_deg(self.h[ok])
        return out

    def valid(self, min_coherence: float = MIN_COHERENCE) -> NDArray[np.bool_]:
        """Lines where the estimate means something: finite, above 0 Hz, inside the excitation band
        (when known) and with a coherence of at least ``min_coherence``.

        Outside the band the force has (almost) no power, so ``h`` is noise over noise; where the
        coherence is low the response there is mostly noise or distortion (its phase wanders by
        thousands of degrees when unwrapped).

        Parameters
        ----------
        min_coherence : float
            Lowest coherence kept (0 keeps every line of the band).

        Returns
        -------
        (m,) bool ndarray
        """
        ok = np.isfinite(self.h) & (self.freq_hz > 0)
        lo, hi = self.band_hz
        if math.isfinite(lo) and math.isfinite(hi):
            ok &= (self.freq_hz >= lo) & (self.freq_hz <= hi)
        with np.errstate(invalid="ignore"):
            ok &= ~(self.coherence < min_coherence)
        return np.asarray(ok, dtype=bool)

    def valid_phase_deg(self, min_coherence: float = MIN_COHERENCE) -> FloatArray:
        """Phase of ``h`` in degrees, unwrapped over the valid lines only (:meth:`valid`; NaN elsewhere).

        Parameters
        ----------
        min_coherence : float
            Lowest coherence kept.
        """
        ok = self.valid(min_coherence)
        out = np.full(self.h.shape, np.nan)
        if ok.any():
            out[ok] = _unwrapped_deg(self.h[ok])
        return out

    def peak_hz(self, band: tuple[float, float] | None = None) -> float:
        """Frequency of the largest ``|h|`` within ``band`` (Hz), refined by a parabola through 3 bins.

        Parameters
        ----------
        band : (float, float) or None
            Frequency range searched (Hz); the whole axis above 0 Hz when None.

        Returns
        -------
        float
            NaN when no bin of the band has a finite response.
        """
        lo, hi = (0.0, math.inf) if band is None else band
        mag = np.abs(self.h)
        sel = (self.freq_hz > lo) & (self.freq_hz <= hi) & np.isfinite(mag)
        if not sel.any():
            return math.nan
        idx = np.flatnonzero(sel)
        i = int(idx[np.argmax(mag[idx])])
        if 0 < i < mag.size - 1 and np.isfinite(mag[i - 1 : i + 2]).all() and (mag[i - 1 : i + 2] > 0).all():
            ym, y0, yp = np.log(mag[i - 1 : i + 2])
            den = ym - 2 * y0 + yp
            shift = 0.5 * (ym - yp) / den if den < 0 else 0.0
            df = float(self.freq_hz[1] - self.freq_hz[0])
            return float(self.freq_hz[i] + float(np.clip(shift, -0.5, 0.5)) * df)
        return float(self.freq_hz[i])



def frf(rec: Record, *, nperseg: int | None = None, output: str = "x") -> FRF:
    """H1 estimate of the frequency response from force to displacement (or another response).

    Parameters
    ----------
    rec : Record
    nperseg : int or None
        Welch segment length (Hann window, 50 % overlap; a Tukey window when one segment spans the
        record); default ``min(n, max(DEFAULT_NPERSEG, n // 8))``. With one segment the coherence
        is 1 everywhere.
    output : str
        Response channel (``x``, ``v`` or ``a``).

    Returns
    -------
    FRF
        ``h = P_fy / P_ff`` and the coherence; the unit is that of the response over that of the force.
    """
    rec = _check_record(rec)
    if output not in ("x", "v", "a"):
        raise ModelSpecError(f"`output` must be x, v or a, got {output!r}")
    y = rec.channel(_check_channel(rec, "output", output))
    seg = _check_nperseg(nperseg, rec.n)
    kw: dict[str, Any] = {
        "fs": rec.fs,
        "window": _spectral_window(seg, rec.n),
        "nperseg": seg,
        "noverlap": seg // 2,
        "detrend": "constant",
    }
    freq, pff = sp_signal.welch(rec.f, **kw)
    _, pyy = sp_signal.welch(y, **kw)
    _, pfy = sp_signal.csd(rec.f, y, **kw)
    with np.errstate(divide="ignore", invalid="ignore"):
        good = pff > 1e-300 * max(float(np.max(pff)), 1e-300)
        h = np.where(good, pfy / np.where(good, pff, 1.0), np.nan + 0j)
        den = pff * pyy
        coh = np.where(den > 0, np.abs(pfy) ** 2 / np.where(den > 0, den, 1.0), np.nan)
    return FRF(
        freq_hz=np.asarray(freq, dtype=np.float64),
        h=np.asarray(h, dtype=np.complex128),
        coherence=np.clip(np.asarray(coh, dtype=np.float64), 0.0, 1.0),
        unit=_ratio_unit(rec.unit(output), rec.unit("f")),
        record=rec.name,
        output=output,
        nperseg=seg,
        band_hz=_band_or_nan(rec),
    )
