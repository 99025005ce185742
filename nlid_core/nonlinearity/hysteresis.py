r"""Evidence of hysteresis and friction: loops that persist at low frequency, a dead band at reversals.

A viscous damper dissipates in proportion to the speed: its force–displacement loop is an ellipse
whose half-width, at equal displacement, is :math:`c\,\omega X\,|\sin|`; relative to the loop's force
extent it shrinks in proportion to the frequency. Rate-independent dissipation (dry friction, a
Bouc-Wen or Preisach hysteresis) keeps its loop at any frequency. Friction in addition makes the
force *step* at a velocity reversal: the displacement stays (nearly) put while the force changes
by about :math:`2F_c` (the dead band, or the flat spot of the loop's corners).

Method
------
1. The restoring force :math:`r = f - m\ddot x` (:func:`.restoring.restoring_force`; the mass from
   an equation-error fit unless given) is taken against ``x``.
2. Turning points of ``x`` are found with hysteresis: a maximum is confirmed once ``x`` has fallen
   from it by ``max(0.1·local amplitude, 5·noise)`` (the noise of ``x`` from its second
   differences, the local amplitude the envelope of ``x``), and alike for a minimum. This is
   robust to noise, unlike the zero crossings of a differentiated velocity.
3. Each maximum–minimum–maximum triple is a cycle with frequency :math:`1/T`, amplitude ``X``
   (half the mean stroke) and force extent ``R`` (half the peak-to-peak restoring force). Its
   loop half-width ``W`` is the mean over a common displacement grid of
   :math:`(r_{up}(x) - r_{down}(x))/2`, the two branches at equal displacement; the width ratio is
   :math:`\eta = W/R`.
4. *Persistence.* With the cycles sorted by frequency, the lowest ``low_fraction`` and the highest
   ``low_fraction`` give median ratios :math:`\eta_{lo}, \eta_{hi}` at median frequencies
   :math:`f_{lo}, f_{hi}`. A viscous loop scales as :math:`\eta \propto f`, so
   :math:`P = (\eta_{lo}/\eta_{hi}) / (f_{lo}/f_{hi})` is about 1 for viscous damping and about
   :math:`f_{hi}/f_{lo}` for rate-independent dissipation. The loops *persist* when the record
   spans a frequency ratio of at least :data:`MIN_SPAN`, :math:`\eta_{lo} \ge` :data:`MIN_LOOP_RATIO`
   and :math:`P \ge` :data:`MIN_PERSISTENCE`.
5. *Dead band.* At each turning point the force change over the samples whose displacement stays
   within :math:`\varepsilon` of the turning value, minus what the cycle's secant stiffness
   ``R/X`` explains over the displacement covered, is the *reversal step*. It is measured at
   :math:`\varepsilon` = 0.5 % and 2 % of the stroke (at least three noise levels): a jump is
   complete at both (sharpness, their ratio, near 1), a smooth hysteretic corner grows with
   :math:`\varepsilon` (sharpness near 1/4). A dead band is reported when the median step at 2 %
   explains at least :data:`MIN_STEP_SHARE` of the loop's full width ``2W``, its sharpness is at
   least :data:`MIN_SHARPNESS` and the loops are wide (:math:`\eta \ge` :data:`MIN_LOOP_RATIO`);
   half the step estimates the Coulomb level :math:`F_c`.

Limits: records that never reverse (a staircase, a ramp) or reverse fewer than twice give no
cycles; a single-frequency record (a sine) cannot show persistence (only the dead band is judged).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .._checks import check_positive as _check_positive
from ..errors import DataValidationError, ModelSpecError
from ..models import TermModel
from ..params import ParameterSet
from ..record import Record
from ._args import FloatArray, _check_record, _with_va
from .baseline import baseline_parameter
from .restoring import local_amplitude, restoring_force

__all__ = [
    "MIN_SPAN",
    "MIN_LOOP_RATIO",
    "MIN_PERSISTENCE",
    "MIN_STEP_SHARE",
    "MIN_SHARPNESS",
    "HysteresisEvidence",
    "turning_points",
    "hysteresis_evidence",
    "HystereticLoops",
    "hysteretic_loops",
]

#: Least ratio of the highest to the lowest cycle frequency for judging persistence.
MIN_SPAN = 2.0
#: Least loop half-width relative to the force extent (``W/R``) that counts as a loop.
MIN_LOOP_RATIO = 0.02
#: Least persistence ``P`` (1 for viscous loops) that counts as rate-independent.
MIN_PERSISTENCE = 2.0
#: Least share of the loop's full width that the reversal step explains for a dead band.
MIN_STEP_SHARE = 0.5
#: Least sharpness (step at 0.5 % over step at 2 % of the stroke) for a jump rather than a corner.
MIN_SHARPNESS = 0.5
#: Turning-point hysteresis: fraction of the local amplitude and multiple of the noise.
_TURN_FRACTION = 0.1
_TURN_NOISE = 5.0
#: Displacement windows around a turning point, fractions of the stroke 2X.
_EPS_SHARP, _EPS_WIDE = 0.005, 0.02
#: Points of the displacement grid on which the two branches are compared.
_GRID = 48


@dataclass(frozen=True, kw_only=True)
class HysteresisEvidence:
    """Loops per cycle and the reversal step of one record (see the module notes).

    Attributes
    ----------
    success : bool
        False when the record has too few cycles to judge (``message`` says why).
    message : str
    record : str
    n_cycles : int
    freq_hz : (k,) ndarray, Hz
        Frequency of each cycle.
    amplitude : (k,) ndarray
        Half the stroke of each cycle (unit of x).
    width : (k,) ndarray
        Loop half-width ``W`` at equal displacement (unit of f).
    ratio : (k,) ndarray
        ``W/R``, R half the peak-to-peak restoring force of the cycle.
    low_freq_hz, high_freq_hz : float, Hz
        Median frequencies of the lowest and highest cycles compared.
    low_ratio, high_ratio : float
        Median ``W/R`` of those cycles.
    span : float
        Highest over lowest cycle frequency.
    persistence : float
        ``(low_ratio/high_ratio)/(low_freq/high_freq)``: about 1 for viscous loops; NaN when the
        span is below ``MIN_SPAN``.
    persistent : bool
        The loops persist at low frequency (rate-independent dissipation).
    step : float
        Median reversal step at 2 % of the stroke beyond the secant stiffness (unit of f).
    step_share : float
        ``step / (2·median W)``.
    sharpness : float
        Median step at 0.5 % over that at 2 % of the stroke (1 for a jump, about 1/4 for a corner).
    dead_band : bool
        The force steps across velocity reversals (friction).
    friction_force : float
        ``step / 2``, the Coulomb level the step suggests (unit of f); NaN without a dead band.
    mass : float
        Mass used for the restoring force.
    units : mapping
        ``x``, ``f`` and ``t`` units of the record.
    findings : tuple of str
        Plain-language statements, each with its number (empty when nothing was found).
    """

    success: bool
    message: str
    record: str
    n_cycles: int
    freq_hz: FloatArray
    amplitude: FloatArray
    width: FloatArray
    ratio: FloatArray
    low_freq_hz: float
    high_freq_hz: float
    low_ratio: float
    high_ratio: float
    span: float
    persistence: float
    persistent: bool
    step: float
    step_share: float
    sharpness: float
    dead_band: bool
    friction_force: float
    mass: float
    units: Mapping[str, str] = field(default_factory=dict)
    findings: tuple[str, ...] = ()


def _noise(y: FloatArray) -> float:
    """Standard deviation of white noise on a smooth signal, from its second differences (MAD)."""
    if y.size < 4:
        return 0.0
    d2 = np.diff(y, 2)
    return float(1.4826 * np.median(np.abs(d2 - np.median(d2))) / math.sqrt(6.0))


def turning_points(x: FloatArray, delta: FloatArray | float) -> tuple[np.ndarray, np.ndarray]:
    """Maxima and minima of ``x`` confirmed by a retreat of more than ``delta``.

    Parameters
    ----------
    x : (n,) ndarray
        Signal.
    delta : float or (n,) ndarray
        Retreat (unit of x) that confirms an extremum, per sample or one value.

    Returns
    -------
    index : (k,) ndarray of int
        Sample index of each turning point, in time order (maxima and minima alternate; the first
        sample is never one).
    kind : (k,) ndarray of int
        +1 for a maximum, -1 for a minimum.
    """
    xx = np.asarray(x, dtype=np.float64)
    dd = np.broadcast_to(np.asarray(delta, dtype=np.float64), xx.shape)
    idx: list[int] = []
    kind: list[int] = []
    i_max = i_min = 0
    direction = 0
    for i in range(1, xx.size):
        xi = xx[i]
        if xi > xx[i_max]:
            i_max = i
        if xi < xx[i_min]:
            i_min = i
        if direction >= 0 and xx[i_max] - xi > dd[i]:
            idx.append(i_max)
            kind.append(1)
            direction = -1
            i_min = i_max + int(np.argmin(xx[i_max:i + 1]))
        elif direction <= 0 and xi - xx[i_min] > dd[i]:
            idx.append(i_min)
            kind.append(-1)
            direction = 1
            i_max = i_min + int(np.argmax(xx[i_min:i + 1]))
    keep = [j for j, i in enumerate(idx) if i > 0]  # the first sample is where the record starts, not a reversal
    return np.asarray(idx, dtype=np.intp)[keep], np.asarray(kind, dtype=np.intp)[keep]


def _branch(x: FloatArray, r: FloatArray, grid: FloatArray) -> FloatArray:
    order = np.argsort(x, kind="stable")
    return np.asarray(np.interp(grid, x[order], r[order]), dtype=np.float64)


def _step(x: FloatArray, r: FloatArray, a: int, b: int, c: int, kind: int, eps: float, secant: float) -> float:
    """Force change at turning point ``b`` (between turning points ``a`` and ``c``) while ``x`` stays
    within ``eps`` of ``x[b]``, beyond the secant stiffness, signed so that a dissipative step is > 0."""
    i0 = b
    while i0 > a and abs(x[i0 - 1] - x[b]) < eps:
        i0 -= 1
    i1 = b
    while i1 < c and abs(x[i1 + 1] - x[b]) < eps:
        i1 += 1
    # after a maximum the force falls (kind +1), after a minimum it rises
    return float(-kind * ((r[i1] - r[i0]) - secant * (x[i1] - x[i0])))


def _median(a: FloatArray) -> float:
    return float(np.median(a)) if a.size else math.nan


def _cycles(x: FloatArray, r: FloatArray, t: FloatArray, tp: np.ndarray, kind: np.ndarray
            ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Each displacement cycle (a maximum, the minimum after it, the next maximum): its frequency, amplitude,
    loop half-width (mean gap between the rising and falling branches of the force) and that width over half
    the force extent."""
    freq, amp, width, ratio = [], [], [], []
    for j in range(tp.size - 2):
        if kind[j] != 1:
            continue
        a, b, c = (int(i) for i in tp[j:j + 3])
        lo, hi = float(x[b]), float(min(x[a], x[c]))
        extent = 0.5 * float(np.ptp(r[a:c + 1]))
        if hi <= lo or extent <= 0:
            continue
        grid = np.linspace(lo, hi, _GRID + 2)[1:-1]
        w = 0.5 * float(np.mean(_branch(x[b:c + 1], r[b:c + 1], grid) - _branch(x[a:b + 1], r[a:b + 1], grid)))
        freq.append(1.0 / float(t[c] - t[a]))
        amp.append(0.25 * float(x[a] - x[b] + x[c] - x[b]))
        width.append(w)
        ratio.append(w / extent)
    fa, aa, wa, ra = (np.asarray(v, dtype=np.float64) for v in (freq, amp, width, ratio))
    return fa, aa, wa, ra


def _reversal_steps(x: FloatArray, r: FloatArray, tp: np.ndarray, kind: np.ndarray, noise_x: float
                    ) -> tuple[float, float]:
    """Median force step at the velocity reversals, measured over a wide and over a sharp window."""
    wide, sharp = [], []
    for j in range(1, tp.size - 1):
        a, b, c = int(tp[j - 1]), int(tp[j]), int(tp[j + 1])
        stroke = 0.5 * (abs(float(x[a] - x[b])) + abs(float(x[c] - x[b])))
        span_x = float(np.ptp(x[a:c + 1]))
        if stroke <= 0 or span_x <= 0:
            continue
        secant = float(np.ptp(r[a:c + 1])) / span_x
        eps_w = max(_EPS_WIDE * stroke, 3 * noise_x)
        eps_s = max(_EPS_SHARP * stroke, 3 * noise_x)
        wide.append(_step(x, r, a, b, c, int(kind[j]), eps_w, secant))
        sharp.append(_step(x, r, a, b, c, int(kind[j]), eps_s, secant))
    return _median(np.asarray(wide)), _median(np.asarray(sharp))


def hysteresis_evidence(rec: Record, *, mass: float | None = None, low_fraction: float = 0.25) -> HysteresisEvidence:
    """Look for rate-independent loops and for a force step at velocity reversals.

    Parameters
    ----------
    rec : Record
        One DOF with ``t, f, x`` (``v`` and ``a`` are derived when missing).
    mass : float or None
        Mass for the restoring force (force unit·s²/displacement unit); None: estimated.
    low_fraction : float
        Share of the cycles (lowest and highest frequencies) compared, in (0, 0.5].

    Returns
    -------
    HysteresisEvidence
        ``success=False`` when fewer than two cycles are found.

    Raises
    ------
    DataValidationError
        ``rec`` is not a one-DOF record.
    ModelSpecError
        ``mass`` or ``low_fraction`` out of range.
    """
    rec = _check_record(rec)
    if rec.n_dof != 1:
        raise DataValidationError(f"`rec`: hysteresis evidence needs a one-DOF record, `{rec.name}` has {rec.n_dof}")
    if not (isinstance(low_fraction, (int, float)) and 0 < low_fraction <= 0.5):
        raise ModelSpecError(f"`low_fraction` must be in (0, 0.5], got {low_fraction!r}")
    if mass is not None:
        _check_positive("mass", mass, "mass")
    rf = restoring_force(_with_va(rec), mass=mass)
    x, r, t = rf.x, rf.force, rf.t
    units = {"x": rec.unit("x"), "f": rec.unit("f"), "t": rec.unit("t")}
    noise_x = _noise(x)
    delta = np.maximum(_TURN_FRACTION * local_amplitude(x), _TURN_NOISE * noise_x) if x.size >= 8 else np.inf
    tp, kind = turning_points(x, delta)
    fa, aa, wa, ra = _cycles(x, r, t, tp, kind)
    nan = math.nan
    empty: dict[str, object] = {
        "record": rec.name, "n_cycles": int(fa.size), "freq_hz": fa, "amplitude": aa, "width": wa, "ratio": ra,
        "mass": rf.mass, "units": units,
    }
    if fa.size < 2:
        return HysteresisEvidence(
            success=False, message=f"only {fa.size} displacement cycle(s) in `{rec.name}`: no loops to judge",
            low_freq_hz=nan, high_freq_hz=nan, low_ratio=nan, high_ratio=nan, span=nan, persistence=nan,
            persistent=False, step=nan, step_share=nan, sharpness=nan, dead_band=False, friction_force=nan,
            **empty)  # type: ignore[arg-type]
    order = np.argsort(fa, kind="stable")
    k = max(1, int(round(low_fraction * fa.size)))
    low, high = order[:k], order[-k:]
    f_lo, f_hi = _median(fa[low]), _median(fa[high])
    e_lo, e_hi = _median(ra[low]), _median(ra[high])
    span = float(fa.max() / fa.min())
    persistence = (e_lo / e_hi) / (f_lo / f_hi) if span >= MIN_SPAN and e_hi > 0 else nan
    persistent = bool(math.isfinite(persistence) and persistence >= MIN_PERSISTENCE and e_lo >= MIN_LOOP_RATIO)

    step, step_s = _reversal_steps(x, r, tp, kind, noise_x)
    w_med = _median(wa)
    step_share = step / (2 * w_med) if w_med > 0 else nan
    sharpness = step_s / step if step > 0 else nan
    loop_ratio = _median(ra)
    dead_band = bool(step > 0 and math.isfinite(step_share) and step_share >= MIN_STEP_SHARE
                     and math.isfinite(sharpness) and sharpness >= MIN_SHARPNESS and loop_ratio >= MIN_LOOP_RATIO)
    friction = 0.5 * step if dead_band else nan

    fu = units["f"]
    findings: list[str] = []
    if persistent:
        findings.append(
            f"hysteresis: the force–displacement loops persist at low frequency (half-width {100 * e_lo:.2g} % of the "
            f"force extent at {f_lo:.3g} Hz, {100 * e_hi:.2g} % at {f_hi:.3g} Hz, where a viscous loop would keep "
            f"{100 * e_hi * f_lo / f_hi:.2g} %): rate-independent dissipation (friction, Bouc-Wen hysteresis) likely")
    if dead_band:
        findings.append(
            f"friction: the restoring force steps by {step:.3g} {fu} at velocity reversals while the displacement "
            f"stays put (a dead band; {100 * step_share:.0f} % of the loop's width): dry friction with Fc ≈ "
            f"{friction:.3g} {fu} likely (fc, stribeck or lugre)")
    msg = (f"{fa.size} cycles at {fa.min():.3g}-{fa.max():.3g} Hz; loop half-width {100 * loop_ratio:.2g} % of the "
           f"force extent" + (f", persistence {persistence:.2g}" if math.isfinite(persistence) else
                              " (one frequency: persistence not judged)"))
    return HysteresisEvidence(
        success=True, message=msg, low_freq_hz=f_lo, high_freq_hz=f_hi, low_ratio=e_lo, high_ratio=e_hi, span=span,
        persistence=persistence, persistent=persistent, step=step, step_share=step_share, sharpness=sharpness,
        dead_band=dead_band, friction_force=friction, findings=tuple(findings), **empty)  # type: ignore[arg-type]


@dataclass(frozen=True, kw_only=True)
class HystereticLoops:
    """Restoring-force loops of a record and of a fitted model with a hysteretic state (Bouc-Wen).

    Attributes
    ----------
    success : bool
    message : str
    record : str
    t : (n,) ndarray, s
    x : (n,) ndarray
        Measured displacement.
    measured : (n,) ndarray
        Measured restoring force ``f − m·a − c·v`` (unit of f; ``a``, ``v`` derived from x where not
        measured; m, c the fitted ``m0``, ``c1``).
    x_model : (n,) ndarray
        The model's simulated displacement under the measured force.
    model : (n,) ndarray
        The model's restoring force ``k·x_model + z`` (z its simulated hysteretic state).
    units : mapping
        ``t``, ``x``, ``f`` units.
    nrmse : float
        RMS of ``model − measured`` over the rms of ``measured`` (both along time).
    """

    success: bool
    message: str
    record: str
    t: FloatArray
    x: FloatArray
    measured: FloatArray
    x_model: FloatArray
    model: FloatArray
    units: Mapping[str, str]
    nrmse: float


def hysteretic_loops(rec: Record, model: TermModel, params: ParameterSet, *, state: str = "z") -> HystereticLoops:
    """Restoring force against displacement, measured and simulated, for a model ``m0,c1,k1,<hysteresis>``.

    Parameters
    ----------
    rec : Record
        One DOF with ``t, f, x``.
    model : TermModel
        Holds ``m0``, ``k1`` and a term with the internal state ``state`` whose force is that state
        (``bouc_wen``); ``c1`` is optional.
    params : ParameterSet
        Values of ``model`` (e.g. ``FitResult.parameters``).
    state : str
        Name of the hysteretic state.

    Returns
    -------
    HystereticLoops
        ``success=False`` with the simulator's message when the model cannot be simulated.

    Raises
    ------
    ModelSpecError
        The model lacks ``m0``, ``k1`` or the state.
    DataValidationError
        ``rec`` is not a one-DOF record.
    """
    from ..simulate import simulate  # noqa: PLC0415 (simulate imports the compiled kernels)

    rec = _check_record(rec)
    if rec.n_dof != 1:
        raise DataValidationError(f"`rec`: loops need a one-DOF record, `{rec.name}` has {rec.n_dof}")
    if not isinstance(model, TermModel):
        raise ModelSpecError(f"`model` must be a TermModel, got {type(model).__name__}")
    m_name, c_name, k_name = (baseline_parameter(role) for role in ("mass", "damping", "stiffness"))
    missing = [n for n in (m_name, k_name) if n not in model.param_names]
    if missing or state not in model.internal_state_names:
        raise ModelSpecError(f"`model` must hold {m_name}, {k_name} and the state `{state}`; {', '.join(model.terms)}"
                             f" lacks {', '.join(missing + ([state] if state not in model.internal_state_names else []))}")
    values = params.as_dict()
    full = _with_va(rec)
    c = float(values.get(c_name, 0.0))
    measured = full.f - values[m_name] * full.channel("a") - c * full.channel("v")
    units = {"t": rec.unit("t"), "x": rec.unit("x"), "f": rec.unit("f")}
    sim = simulate(model, rec.t, rec.f, params)
    nan = np.full(rec.n, np.nan)
    if not sim.success:
        return HystereticLoops(success=False, message=f"the model could not be simulated: {sim.message}",
                               record=rec.name, t=rec.t, x=rec.x, measured=measured, x_model=nan, model=nan,
                               units=units, nrmse=math.nan)
    z = np.asarray(sim.states[state], dtype=np.float64)
    model_force = values[k_name] * sim.x + z
    scale = float(np.sqrt(np.mean(measured**2))) or 1.0
    nrmse = float(np.sqrt(np.mean((model_force - measured) ** 2))) / scale
    return HystereticLoops(success=True, message=f"restoring force reproduced to {100 * nrmse:.3g} % (NRMSE)",
                           record=rec.name, t=rec.t, x=rec.x, measured=np.asarray(measured, dtype=np.float64),
                           x_model=np.asarray(sim.x, dtype=np.float64), model=model_force, units=units, nrmse=nrmse)
