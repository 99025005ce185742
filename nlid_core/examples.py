"""Example records with a known answer.

Responses are computed by :func:`scipy.integrate.solve_ivp` (DOP853,
rtol 1e-11) with the force as a *continuous* function of time, so the
records are exact solutions of the model up to the added noise; they do not
depend on the simulator being tested.

``seed`` reproduces the benchmark of seed 000: θ = [m0, m1, c1, c2, k1, k3]
= [2.0, 0.08, 0.5, 0.2, 800, 20000], linear chirp 0.5 → 5 Hz over 12 s of
amplitude 10 N, 6000 samples at 500 Hz (``t = k / 500``), noise standard
deviations 4e-4 m, 3e-3 m/s and 5e-2 m/s² drawn in that order from
``numpy.random.default_rng(42)``. (The seed's own script sampled
``linspace(0, 12, 6000)``, whose interval 12/5999 s is a rate of 499.917 Hz,
not the 500 Hz it states; the examples sample at exactly ``fs_hz``.)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.integrate import solve_ivp
from scipy.signal import butter, lfilter, sosfiltfilt

from .errors import ModelSpecError, SimulationError
from .models import ModelSettings, TermModel
from .record import Record, from_arrays

__all__ = ["ExampleSpec", "EXAMPLES", "generate", "make_example", "chirp_force", "noise_filter"]

FloatArray = NDArray[np.float64]

SEED_TRUTH: Mapping[str, float] = {"m0": 2.0, "m1": 0.08, "c1": 0.5, "c2": 0.2, "k1": 800.0, "k3": 20000.0}


def chirp_force(amplitude: float, f0_hz: float, f1_hz: float, duration_s: float) -> Callable[[FloatArray], FloatArray]:
    """Linear chirp ``A·sin(2π(f0·t + (f1 − f0)·t²/(2T)))`` as a function of time."""

    def force(t: FloatArray) -> FloatArray:
        return amplitude * np.sin(2 * np.pi * (f0_hz * t + 0.5 * (f1_hz - f0_hz) / duration_s * t * t))

    return force


@dataclass(frozen=True, kw_only=True)
class ExampleSpec:
    """Settings of a simulated test.

    Attributes
    ----------
    terms : mapping
        True coefficient per term (SI); the other parameters of a term (settings such as ``v_eps``)
        come from ``settings``.
    amplitude_n : float
        Chirp amplitude (N).
    f0_hz, f1_hz : float
        Chirp start and end frequency.
    duration_s : float
    fs_hz : float
        Sampling rate: ``n = int(duration·fs)`` samples at ``t = k / fs``
        (``k = 0 .. n-1``), so the record's rate is exactly ``fs_hz``.
    noise : mapping
        Noise standard deviation per channel (x m, v m/s, a m/s², f N); drawn
        in the order x, v, a, f.
    noise_colour : str
        ``"white"`` (independent samples), ``"ar1:PHI"`` (a first-order autoregression with coefficient
        0 <= PHI < 1, stationary from the first sample) or ``"band:F1-F2"`` (white noise through a
        fourth-order Butterworth band-pass from F1 to F2 Hz, forward and backward): coloured measurement noise
        of the same standard deviation, for checking intervals on residuals that are not white.
    measured : tuple of str
        Response channels written to the record (``x`` always).
    x0 : (float, float)
        Initial displacement and velocity.
    seed : int
        RNG seed.
    settings : ModelSettings
    """

    terms: Mapping[str, float]
    amplitude_n: float = 10.0
    f0_hz: float = 0.5
    f1_hz: float = 5.0
    duration_s: float = 12.0
    fs_hz: float = 500.0
    noise: Mapping[str, float] = field(default_factory=lambda: {"x": 4e-4, "v": 3e-3, "a": 5e-2})
    noise_colour: str = "white"
    measured: tuple[str, ...] = ("x", "v", "a")
    x0: tuple[float, float] = (0.0, 0.0)
    seed: int = 42
    settings: ModelSettings = field(default_factory=ModelSettings)
    description: str = ""


EXAMPLES: Mapping[str, ExampleSpec] = {
    "seed": ExampleSpec(
        terms=SEED_TRUTH,
        description="seed 000 benchmark: (m0 + m1·x²)ẍ + c1·ẋ + c2·|ẋ|ẋ + k1·x + k3·x³ = f, 10 N chirp 0.5-5 Hz",
    ),
    "seed-strong": ExampleSpec(
        terms=SEED_TRUTH, amplitude_n=30.0, f1_hz=10.0,
        description="seed system under a 30 N chirp over 0.5-10 Hz (m1 well determined)",
    ),
    "softening": ExampleSpec(
        terms={"m0": 1.5, "c1": 0.8, "k1": 1500.0, "k3": -2.0e5}, amplitude_n=4.0, f0_hz=1.0, f1_hz=8.0,
        duration_s=15.0, fs_hz=400.0, noise={"x": 2e-5}, measured=("x",), seed=7,
        description="softening Duffing oscillator (k3 < 0), displacement only",
    ),
    "friction": ExampleSpec(
        terms={"m0": 1.0, "c1": 2.0, "fc": 1.5, "k1": 400.0}, amplitude_n=8.0, f0_hz=0.5, f1_hz=6.0,
        duration_s=10.0, fs_hz=1000.0, noise={"x": 1e-5, "v": 1e-3}, measured=("x", "v"), seed=3,
        settings=ModelSettings(v_eps=1e-3 * 10),
        description="oscillator with smoothed Coulomb friction",
    ),
}


def generate(spec: ExampleSpec, *, name: str = "example") -> Record:
    """Simulate ``spec`` accurately and add noise; returns a validated record labelled ``name``.

    Raises
    ------
    ModelSpecError
        Invalid settings.
    SimulationError
        The true system diverges under this excitation.
    """
    if spec.duration_s <= 0 or spec.fs_hz <= 0 or spec.amplitude_n < 0:
        raise ModelSpecError("`duration_s`, `fs_hz` must be positive and `amplitude_n` >= 0")
    if "x" not in spec.measured or any(c not in ("x", "v", "a") for c in spec.measured):
        raise ModelSpecError(f"`measured` must contain x and only x, v, a; got {spec.measured}")
    bad_noise = {c: v for c, v in spec.noise.items() if c not in ("x", "v", "a", "f") or not (v >= 0)}
    if bad_noise:
        raise ModelSpecError(f"`noise` takes channels x, v, a, f with standard deviations >= 0; got {bad_noise}")
    colour = noise_filter(spec.noise_colour, spec.fs_hz)
    bad_terms = {k: v for k, v in spec.terms.items() if not np.isfinite(v)}
    if bad_terms:
        raise ModelSpecError(f"true coefficients must be finite; got {bad_terms}")
    model = TermModel(tuple(spec.terms), spec.settings)
    model.require_simulable()
    # every parameter, settings such as v_eps included (from ``spec.settings``); true values as given
    theta = np.array([float(spec.terms.get(p.name, p.value)) for p in model.default_parameters()], dtype=np.float64)
    n = int(spec.duration_s * spec.fs_hz)
    t = np.arange(n, dtype=np.float64) / spec.fs_hz
    force = chirp_force(spec.amplitude_n, spec.f0_hz, spec.f1_hz, spec.duration_s)
    inertia = model.inertia_mask()
    th_in, th_out = theta[inertia], theta[~inertia]
    plan, th = model._regressor_plan, np.ascontiguousarray(theta, dtype=np.float64)
    from .terms import vm

    evaluate_regressors: Any = vm.evaluate_regressors
    xv, vv, one = np.zeros(1), np.zeros(1), np.ones(1)

    def rhs(tau: float, y: FloatArray) -> list[float]:
        # one evaluation at a = 1: the inertia columns are the mass, the others do not depend on a (the term
        # program called directly: this runs some 10^5 times per record)
        xv[0], vv[0] = y[0], y[1]
        row, total = np.zeros((1, th.size)), np.zeros(1)
        evaluate_regressors(*plan, xv, vv, one, 1.0, th, row, total)
        return [float(y[1]), (float(force(np.array(tau))) - float(row[0, ~inertia] @ th_out))
                / float(row[0, inertia] @ th_in)]

    sol = solve_ivp(rhs, (0.0, float(t[-1])), list(spec.x0), method="DOP853", t_eval=t, rtol=1e-11,
                    atol=1e-13, max_step=1.0 / spec.fs_hz)
    if not sol.success or sol.y.shape[1] != n or not np.all(np.isfinite(sol.y)):
        reached = np.abs(sol.y[0][np.isfinite(sol.y[0])]) if sol.y.size else np.zeros(0)
        peak = f"; |x| had reached {float(reached.max()):.3g} m" if reached.size else ""
        stop = float(sol.t[-1]) if sol.t.size else 0.0
        raise SimulationError(  # plain words: the integrator's own message means nothing to a user
            f"the example system diverges under this excitation: its response grew without bound at t = {stop:.3g} s"
            f"{peak}; lower the amplitude or keep the band away from the resonance")
    x, v = sol.y
    f = force(t)
    mass = model.regressors(x, v, np.ones(n), theta)[:, inertia] @ theta[inertia]
    a = (f - model.regressors(x, v, np.zeros(n), theta)[:, ~inertia] @ theta[~inertia]) / mass
    rng = np.random.default_rng(spec.seed)
    clean = {"x": x, "v": v, "a": a, "f": f}
    noisy = {}
    for c in ("x", "v", "a", "f"):
        sd = float(spec.noise.get(c, 0.0))
        noisy[c] = clean[c] + sd * colour(rng.standard_normal(n)) if sd > 0 else clean[c].copy()
    meta = {
        "true_parameters": dict(spec.terms),
        "excitation": f"chirp {spec.amplitude_n:g} N, {spec.f0_hz:g}->{spec.f1_hz:g} Hz over {spec.duration_s:g} s",
        "noise": dict(spec.noise),
        **({"noise_colour": spec.noise_colour} if spec.noise_colour != "white" else {}),
        "seed": spec.seed,
        "x0": list(spec.x0),
    }
    return from_arrays(
        t, noisy["f"], noisy["x"],
        noisy["v"] if "v" in spec.measured else None,
        noisy["a"] if "a" in spec.measured else None,
        name=name, source=f"example:{name}", meta=meta,
    )


def noise_filter(colour: str, fs_hz: float) -> Callable[[FloatArray], FloatArray]:
    """The filter that turns unit white noise into unit noise of ``colour`` (see :class:`ExampleSpec`).

    Raises
    ------
    ModelSpecError
        An unknown colour, a coefficient outside [0, 1) or a band outside (0, fs/2).
    """
    kind, _, arg = str(colour).partition(":")
    if kind == "white" and not arg:
        return lambda w: w
    try:
        if kind == "ar1":
            phi = float(arg)
            if not 0.0 <= phi < 1.0:
                raise ValueError
            # stationary from the first sample: e0 ~ N(0, 1), then e_k = φ e_(k-1) + √(1 − φ²) w_k
            return lambda w: _ar1(w, phi)
        if kind == "band":
            lo_s, _, hi_s = arg.partition("-")
            lo, hi = float(lo_s), float(hi_s)
            if not 0.0 < lo < hi < fs_hz / 2:
                raise ValueError
            sos = butter(4, [lo, hi], btype="bandpass", fs=fs_hz, output="sos")

            def band(w: FloatArray) -> FloatArray:
                e = sosfiltfilt(sos, w)
                sd = float(np.std(e))
                return np.asarray(e / sd if sd > 0 else e, dtype=np.float64)

            return band
    except ValueError:
        pass
    raise ModelSpecError(f"noise colour {colour!r}: use white, ar1:PHI with 0 <= PHI < 1, or band:F1-F2 with"
                         f" 0 < F1 < F2 < {fs_hz / 2:g} Hz")


def _ar1(w: FloatArray, phi: float) -> FloatArray:
    e = np.empty_like(w)
    if w.size:
        e[0] = w[0]
        e[1:] = lfilter([math.sqrt(1 - phi * phi)], [1.0, -phi], w[1:], zi=[phi * w[0]])[0]
    return e


def make_example(name: str = "seed", *, overrides: Mapping[str, object] | None = None) -> Record:
    """Generate the example ``name`` (a key of ``EXAMPLES``), with ``overrides`` of its ExampleSpec fields."""
    if name not in EXAMPLES:
        raise ModelSpecError(f"unknown example {name!r}; examples are {', '.join(EXAMPLES)}")
    spec = EXAMPLES[name]
    if overrides:
        import dataclasses

        try:
            spec = dataclasses.replace(spec, **overrides)  # type: ignore[arg-type]
        except TypeError as exc:
            raise ModelSpecError(f"bad example override: {exc}") from None
    return generate(spec, name=name)


def truth_vector(record: Record, names: Sequence[str]) -> FloatArray:
    """True parameter values stored in an example record's meta."""
    truth = record.meta.get("true_parameters", {})
    return np.array([float(truth.get(n, 0.0)) for n in names])
