"""Tests of nlid_core.signals: differentiators, bandwidth, windows, filters."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import signal as sp_signal

from nlid_core import signals
from nlid_core.errors import DataValidationError, ModelSpecError
from nlid_core.record import from_arrays
from nlid_core.signals import (
    DIFFERENTIATORS,
    SAVGOL_CUTOFF_RATIO,
    SAVGOL_POLYORDER,
    default_savgol_window,
    derive_missing,
    differentiate,
    filter_record,
    lowpass,
    optimal_cutoff_hz,
    savgol_cutoff_hz,
    savgol_derivative,
    signal_bandwidth_hz,
    spectral_derivative,
)

FS = 500.0
DT = 1.0 / FS
FREQS = np.array([0.5, 1.3, 2.2, 3.1, 4.0, 5.0])
PHASES = np.linspace(0.0, 2.0, FREQS.size)
AMPLITUDE = 1e-2
NOISE = 4e-4
EDGE = 500  # samples (1 s) left out at each end for "interior" errors


def _multisine(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    amp = AMPLITUDE / math.sqrt(FREQS.size)
    w = 2.0 * math.pi * FREQS[:, None]
    arg = w * t[None, :] + PHASES[:, None]
    x = amp * np.sin(arg).sum(axis=0)
    v = amp * (w * np.cos(arg)).sum(axis=0)
    a = -amp * (w**2 * np.sin(arg)).sum(axis=0)
    return x, v, a


@pytest.fixture(scope="module")
def sig() -> dict[str, np.ndarray]:
    t = np.arange(0.0, 12.0, DT)
    x, v, a = _multisine(t)
    noisy = x + NOISE * np.random.default_rng(1234).standard_normal(t.size)
    return {"t": t, "x": x, "v": v, "a": a, "noisy": noisy}


def _rel_rms(est: np.ndarray, ref: np.ndarray, part: slice | np.ndarray = slice(EDGE, -EDGE)) -> float:
    """RMS error over ``part`` relative to the RMS of the whole reference."""
    return float(np.sqrt(np.mean((est - ref)[part] ** 2)) / np.sqrt(np.mean(ref**2)))


# ---------------------------------------------------------------------------
# Accuracy on clean data
# ---------------------------------------------------------------------------
def test_savgol_clean_accuracy(sig):
    v = savgol_derivative(sig["x"], DT, order=1)
    a = savgol_derivative(sig["x"], DT, order=2)
    assert v.shape == a.shape == sig["x"].shape
    assert _rel_rms(v, sig["v"]) < 1e-3
    assert _rel_rms(a, sig["a"]) < 1e-2
    # ends (polynomial evaluated off-centre) are less accurate but bounded
    assert _rel_rms(v, sig["v"], slice(None)) < 5e-3
    assert _rel_rms(a, sig["a"], slice(None)) < 2e-2
    assert np.max(np.abs(v - sig["v"])) < 0.05 * np.max(np.abs(sig["v"]))
    # the longer windows chosen for the noisy version bias the clean signal little
    for order, ref, tol in ((1, sig["v"], 1e-3), (2, sig["a"], 1e-2)):
        w = default_savgol_window(sig["noisy"], DT, order)
        est = savgol_derivative(sig["x"], DT, order=order, window=w)
        assert _rel_rms(est, ref) < tol
        assert _rel_rms(est, ref, slice(None)) < 10 * tol


def test_spectral_clean_accuracy_including_ends(sig):
    v = spectral_derivative(sig["x"], DT, order=1)
    a = spectral_derivative(sig["x"], DT, order=2)
    assert _rel_rms(v, sig["v"]) < 1e-3
    assert _rel_rms(a, sig["a"]) < 1e-2
    # whole record, ends included
    assert _rel_rms(v, sig["v"], slice(None)) < 1e-2
    assert _rel_rms(a, sig["a"], slice(None)) < 5e-2
    # no blow-up at the very ends
    for est, ref in ((v, sig["v"]), (a, sig["a"])):
        ends = np.r_[0:50, ref.size - 50 : ref.size]
        assert np.max(np.abs(est - ref)[ends]) < 0.2 * np.max(np.abs(ref))


def test_spectral_explicit_cutoff_and_no_cutoff(sig):
    v1 = spectral_derivative(sig["x"], DT, f_cut_hz=20.0)
    v2 = spectral_derivative(sig["x"], DT, f_cut_hz=1e6)  # above Nyquist: nothing removed
    assert _rel_rms(v1, sig["v"]) < 1e-4
    assert _rel_rms(v2, sig["v"]) < 1e-3
    # a cut-off below the signal band removes it
    v3 = spectral_derivative(sig["x"], DT, f_cut_hz=1.0)
    assert _rel_rms(v3, sig["v"]) > 0.5


def test_gradient_clean_accuracy(sig):
    v = differentiate(sig["x"], DT, method="gradient", order=1)
    a = differentiate(sig["x"], DT, method="gradient", order=2)
    assert _rel_rms(v, sig["v"]) < 2e-3
    assert _rel_rms(a, sig["a"]) < 1e-2


def test_derivatives_of_a_straight_line_with_offset_are_exact():
    t = np.arange(2000) * DT
    y = 1e3 + 0.25 * t
    for method in DIFFERENTIATORS:
        np.testing.assert_allclose(differentiate(y, DT, method=method), 0.25, rtol=1e-7, atol=0)
        np.testing.assert_allclose(differentiate(y, DT, method=method, order=2), 0.0, atol=1e-5)


# ---------------------------------------------------------------------------
# Noise
# ---------------------------------------------------------------------------
def test_savgol_beats_raw_differencing_on_noisy_data(sig):
    x = sig["noisy"]
    raw_v = np.gradient(x, DT)
    raw_a = np.zeros_like(x)
    raw_a[1:-1] = np.diff(x, 2) / DT**2
    raw_a[0], raw_a[-1] = raw_a[1], raw_a[-2]
    v = savgol_derivative(x, DT, order=1)
    a = savgol_derivative(x, DT, order=2)
    err_v, err_raw_v = _rel_rms(v, sig["v"]), _rel_rms(raw_v, sig["v"])
    err_a, err_raw_a = _rel_rms(a, sig["a"]), _rel_rms(raw_a, sig["a"])
    assert err_raw_v / err_v >= 10.0
    assert err_raw_a / err_a >= 10.0
    assert err_v < 0.1
    assert err_a < 0.3


def test_spectral_noisy_ends_do_not_blow_up(sig):
    x = sig["noisy"]
    ends = np.r_[0:100, x.size - 100 : x.size]
    for order, ref, limit in ((1, sig["v"], 0.15), (2, sig["a"], 0.5)):
        est = spectral_derivative(x, DT, order=order)
        assert _rel_rms(est, ref) < 0.1
        end_err = _rel_rms(est, ref, ends)
        assert end_err < limit
        # no worse than the Savitzky-Golay end fits
        assert end_err < 1.5 * _rel_rms(savgol_derivative(x, DT, order=order), ref, ends)


# ---------------------------------------------------------------------------
# Savitzky–Golay details
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(("window", "order"), [(21, 1), (31, 2), (51, 1)])
def test_savgol_matches_scipy_for_moderate_windows(sig, window, order):
    ours = savgol_derivative(sig["noisy"], DT, order=order, window=window)
    ref = sp_signal.savgol_filter(
        sig["noisy"], window, SAVGOL_POLYORDER[order], deriv=order, delta=DT, mode="interp"
    )
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-7 * np.max(np.abs(ref)))


def test_savgol_wide_window_is_exact_on_polynomials():
    # scipy.signal.savgol_coeffs is badly conditioned here (scipy#20825)
    n = 3001
    t = np.arange(n) * DT
    s = t / t[-1]
    c = [0.3, -1.0, 2.0, 0.5, -1.5, 0.7, 0.2]
    y = np.polynomial.polynomial.polyval(s, c)
    dc1 = np.polynomial.polynomial.polyder(c, 1)
    dc2 = np.polynomial.polynomial.polyder(c, 2)
    y1 = np.polynomial.polynomial.polyval(s, dc1) / t[-1]
    y2 = np.polynomial.polynomial.polyval(s, dc2) / t[-1] ** 2
    np.testing.assert_allclose(
        savgol_derivative(y, DT, order=2, window=601), y2, rtol=0, atol=1e-7 * np.max(np.abs(y2))
    )
    # order-1 filter (polyorder 5) is exact up to degree 5
    y5 = y - c[6] * s**6
    y5_1 = y1 - 6 * c[6] * s**5 / t[-1]
    np.testing.assert_allclose(
        savgol_derivative(y5, DT, order=1, window=601), y5_1, rtol=0, atol=1e-8 * np.max(np.abs(y5_1))
    )


def _reference_sg_coeffs(window: int, polyorder: int, deriv: int) -> np.ndarray:
    """Independent SG coefficients (convolution order) from scaled monomials."""
    m = window // 2
    u = np.arange(-m, m + 1) / m
    pinv = np.linalg.pinv(np.vander(u, polyorder + 1, increasing=True))
    return (math.factorial(deriv) * pinv[deriv] / m**deriv)[::-1]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("window", [9, 15, 51, 101, 255, 1001])
def test_savgol_cutoff_is_the_minus_3db_point(order, window):
    fc = savgol_cutoff_hz(window, DT, order=order)
    omega = 2.0 * math.pi * fc * DT
    coeffs = _reference_sg_coeffs(window, SAVGOL_POLYORDER[order], order)
    _, h = sp_signal.freqz(coeffs, worN=[0.5 * omega, omega])
    rel = np.abs(h) / np.array([0.5 * omega, omega]) ** order
    assert rel[1] == pytest.approx(1.0 / math.sqrt(2.0), abs=1e-4)
    assert rel[0] > 0.9


def test_default_window_odd_within_bounds_and_matched_to_bandwidth(sig):
    n = sig["x"].size
    for order in (1, 2):
        p = SAVGOL_POLYORDER[order]
        w = default_savgol_window(sig["noisy"], DT, order)
        lo = p + 2 + (p + 2 + 1) % 2
        assert w % 2 == 1
        assert lo <= w <= n // 4
        # noisy data (nothing above the noise beyond the band): the bandwidth rule decides
        target = SAVGOL_CUTOFF_RATIO * signal_bandwidth_hz(sig["noisy"], DT)
        assert savgol_cutoff_hz(w, DT, order=order) >= target
        assert savgol_cutoff_hz(w + 2, DT, order=order) < target
    # noise-free data: the shortest window is the most accurate
    assert default_savgol_window(sig["x"], DT, 1) == 7
    assert default_savgol_window(sig["x"], DT, 2) == 9


def test_optimal_cutoff_follows_weak_harmonics_above_the_noise():
    t = np.arange(0.0, 20.0, DT)
    w0 = 2 * np.pi * 4.0
    # a 3 % third harmonic: < 0.1 % of the displacement power, ~20 % of the acceleration's
    x = np.sin(w0 * t) + 0.03 * np.sin(3 * w0 * t + 0.4)
    a = -(w0**2) * np.sin(w0 * t) - 0.27 * w0**2 * np.sin(3 * w0 * t + 0.4)
    noisy = x + 1e-4 * np.random.default_rng(11).standard_normal(t.size)
    f_bw = signal_bandwidth_hz(noisy, DT)
    assert f_bw < 5.0
    f_opt = optimal_cutoff_hz(noisy, DT, order=2)
    assert f_opt > 13.0
    est = savgol_derivative(noisy, DT, order=2)
    assert savgol_cutoff_hz(default_savgol_window(noisy, DT, 2), DT, order=2) >= f_opt
    assert _rel_rms(est, a) < 0.02
    # white noise alone: nothing stands above the floor
    assert optimal_cutoff_hz(np.random.default_rng(1).standard_normal(4096), DT) < 0.05 * FS / 2
    # clean: the content only ends where leakage sinks below rounding noise
    assert optimal_cutoff_hz(x, DT) > 50.0


def test_default_window_clamps():
    rng = np.random.default_rng(5)
    white = rng.standard_normal(2000)
    assert default_savgol_window(white, DT, 1) == 7  # polyorder 5 + 2
    assert default_savgol_window(white, DT, 2) == 9  # polyorder 6 + 2, rounded up to odd
    slow = np.sin(2 * np.pi * 0.5 * np.arange(402) * DT) + 0.01 * rng.standard_normal(402)
    assert default_savgol_window(slow, DT, 1, cutoff_ratio=1.5) == 99  # n // 4 = 100, rounded down to odd
    line = np.linspace(0.0, 1.0, 402)  # no power: bandwidth = Nyquist, smallest window
    assert default_savgol_window(line, DT, 1) == 7
    with pytest.raises(ModelSpecError, match="`cutoff_ratio`"):
        default_savgol_window(white, DT, 1, cutoff_ratio=1.0)


def test_default_window_for_a_million_samples():
    n = 1_000_000
    t = np.arange(n) * DT
    y = np.sin(2 * np.pi * 3.0 * t) + 1e-3 * np.random.default_rng(0).standard_normal(n)
    w = default_savgol_window(y, DT, 2)
    assert w % 2 == 1
    assert 9 <= w <= n // 4


# ---------------------------------------------------------------------------
# Bandwidth
# ---------------------------------------------------------------------------
def test_bandwidth_of_a_sine(sig):
    y = np.sin(2 * np.pi * 5.0 * sig["t"])
    assert signal_bandwidth_hz(y, DT) == pytest.approx(5.0, rel=0.06)
    noisy = y + 0.05 * np.random.default_rng(2).standard_normal(y.size)
    assert signal_bandwidth_hz(noisy, DT) == pytest.approx(5.0, rel=0.06)
    assert signal_bandwidth_hz(sig["noisy"], DT) == pytest.approx(5.0, rel=0.06)


def test_bandwidth_zooms_into_narrow_bands_and_saturates_on_white_noise():
    fs = 20_000.0
    t = np.arange(0.0, 10.0, 1.0 / fs)
    y = np.sin(2 * np.pi * 1.0 * t + 0.3) + 2.0 * t  # 1 Hz, far below the 4.9 Hz bin width
    # resolution after zooming is limited by the record length (0.1 Hz)
    assert signal_bandwidth_hz(y, 1.0 / fs) == pytest.approx(1.0, abs=0.25)
    white = np.random.default_rng(3).standard_normal(8192)
    assert signal_bandwidth_hz(white, DT) > 0.9 * FS / 2
    assert signal_bandwidth_hz(np.linspace(0.0, 1.0, 500), DT) == FS / 2  # no power left
    with pytest.raises(ModelSpecError, match="`energy`"):
        signal_bandwidth_hz(white, DT, energy=1.0)


# ---------------------------------------------------------------------------
# Registry and argument checks
# ---------------------------------------------------------------------------
def test_registry_and_unknown_method(sig):
    assert set(DIFFERENTIATORS) == {"savgol", "spectral", "gradient"}
    with pytest.raises(ModelSpecError) as exc:
        differentiate(sig["x"], DT, method="magic")
    msg = str(exc.value)
    assert "'magic'" in msg and "`method`" in msg
    for name in DIFFERENTIATORS:
        assert name in msg
    assert isinstance(exc.value, ValueError)
    with pytest.raises(TypeError):
        DIFFERENTIATORS["mine"] = np.gradient  # type: ignore[index]


def test_differentiate_accepts_callables_and_options(sig):
    def twice(y, dt, *, order=1, window=None):
        return 2.0 * np.gradient(np.asarray(y), dt)

    np.testing.assert_allclose(differentiate(sig["x"], DT, method=twice), 2.0 * np.gradient(sig["x"], DT))
    v = differentiate(sig["x"], DT, method="spectral", f_cut_hz=15.0)
    assert _rel_rms(v, sig["v"]) < 1e-4
    with pytest.raises(ModelSpecError, match="does not accept"):
        differentiate(sig["x"], DT, method="savgol", f_cut_hz=15.0)

    def bad(y, dt, *, order=1, window=None):
        return np.zeros(3)

    with pytest.raises(ModelSpecError, match="returned shape"):
        differentiate(sig["x"], DT, method=bad)


def test_argument_errors(sig):
    x = sig["x"]
    with pytest.raises(ModelSpecError, match="`order`.*got 3"):
        differentiate(x, DT, order=3)
    with pytest.raises(ModelSpecError, match="`window`.*got 30"):
        savgol_derivative(x, DT, window=30)
    with pytest.raises(ModelSpecError, match="`window`.*longer"):
        savgol_derivative(x[:50], DT, window=51)
    with pytest.raises(ModelSpecError, match="`window` is not used"):
        differentiate(x, DT, method="spectral", window=31)
    with pytest.raises(ModelSpecError, match="`window` is not used"):
        differentiate(x, DT, method="gradient", window=31)
    with pytest.raises(DataValidationError, match="`dt`"):
        differentiate(x, 0.0)
    with pytest.raises(DataValidationError, match="`y` must be a 1-D"):
        differentiate(np.ones((10, 2)), DT)
    bad = x.copy()
    bad[7] = np.nan
    with pytest.raises(DataValidationError, match="index 7"):
        differentiate(bad, DT)
    with pytest.raises(ModelSpecError, match="`f_cut_hz`"):
        spectral_derivative(x, DT, f_cut_hz=-1.0)


# ---------------------------------------------------------------------------
# Low-pass filter
# ---------------------------------------------------------------------------
def test_lowpass_removes_100hz_keeps_2hz_without_lag():
    fs = 1000.0
    t = np.arange(0.0, 10.0, 1.0 / fs)
    slow = np.sin(2 * np.pi * 2.0 * t)
    y = slow + 0.5 * np.sin(2 * np.pi * 100.0 * t)
    out = lowpass(y, 1.0 / fs, 20.0)
    mid = slice(1000, -1000)
    # amplitude of the 2 Hz component within 1 %
    basis = np.column_stack([np.sin(2 * np.pi * 2.0 * t), np.cos(2 * np.pi * 2.0 * t)])[mid]
    coef, *_ = np.linalg.lstsq(basis, out[mid], rcond=None)
    assert math.hypot(*coef) == pytest.approx(1.0, rel=0.01)
    # 100 Hz tone gone
    assert np.max(np.abs(out - slow)[mid]) < 1e-3
    # zero phase: cross-correlation with the 2 Hz component peaks at lag 0
    lags = np.arange(-100, 101)
    xc = [np.dot(out[mid], np.roll(slow, k)[mid]) for k in lags]
    assert lags[int(np.argmax(xc))] == 0


def test_lowpass_validates_cutoff():
    y = np.ones(100)
    for bad in (0.0, -5.0, 250.0, 300.0, float("nan")):
        with pytest.raises(ModelSpecError, match=r"`f_cut_hz`.*Nyquist frequency 250 Hz"):
            lowpass(y, DT, bad)
    with pytest.raises(ModelSpecError, match="`order`"):
        lowpass(y, DT, 10.0, order=0)


# ---------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------
def _record(sig, **channels):
    return from_arrays(sig["t"], np.sin(sig["t"]), sig["x"], name="test", **channels)


def test_derive_missing_from_displacement_only(sig):
    rec = _record(sig)
    out = derive_missing(rec)
    assert out.derived == ("v", "a")
    assert out.measured == ("x",)
    np.testing.assert_array_equal(out.x, rec.x)
    assert _rel_rms(out.v, sig["v"]) < 1e-3
    assert _rel_rms(out.a, sig["a"]) < 1e-2
    w1 = default_savgol_window(sig["x"], DT, 1)
    w2 = default_savgol_window(sig["x"], DT, 2)
    assert out.warnings[0].startswith(f"v derived from x by savgol (window {w1} samples")
    assert out.warnings[1].startswith(f"a derived from x by savgol (2nd derivative, window {w2} samples")
    assert out.units["v"] == "m/s" and out.units["a"] == "m/s^2"
    assert rec.v is None and rec.derived == ()  # original untouched


def test_derive_missing_keeps_measured_velocity(sig):
    rec = _record(sig, v=sig["v"])
    out = derive_missing(rec, window=21)
    assert out.derived == ("a",)
    assert out.v is rec.v
    assert out.warnings == ("a derived from v by savgol (window 21 samples, -3 dB at "
                            f"{savgol_cutoff_hz(21, DT):.3g} Hz)",)
    assert _rel_rms(out.a, sig["a"]) < 1e-3


def test_derive_missing_uses_x_when_velocity_is_derived(sig):
    rec = _record(sig, v=np.zeros_like(sig["x"]), derived=("v",))
    out = derive_missing(rec, method="spectral")
    assert out.derived == ("v", "a")
    assert out.v is rec.v
    assert out.warnings[-1].startswith("a derived from x by spectral (2nd derivative, cut-off")
    assert _rel_rms(out.a, sig["a"]) < 1e-2


def test_derive_missing_nothing_to_do_and_errors(sig):
    rec = _record(sig, v=sig["v"], a=sig["a"])
    assert derive_missing(rec) is rec
    with pytest.raises(ModelSpecError, match="valid names are gradient, savgol, spectral"):
        derive_missing(_record(sig), method="nope")
    with pytest.raises(ModelSpecError, match="`window` is not used"):
        derive_missing(_record(sig), method="spectral", window=21)


def test_derive_missing_units_follow_displacement(sig):
    rec = from_arrays(sig["t"], sig["x"], 1e3 * sig["x"], units={"x": "mm"})
    out = derive_missing(rec, method="gradient")
    assert out.units["v"] == "mm/s" and out.units["a"] == "mm/s^2"
    assert "gradient" in out.warnings[0]


def test_filter_record(sig):
    rec = _record(sig, v=sig["v"])
    noisy = rec.replace(f=rec.f + 0.1 * np.sin(2 * np.pi * 200.0 * sig["t"]))
    out = filter_record(noisy, 50.0)
    assert np.max(np.abs(out.f - rec.f)[EDGE:-EDGE]) < 1e-3
    np.testing.assert_array_equal(out.t, rec.t)
    assert out.a is None
    assert out.warnings[-1].startswith("low-pass filtered f, x, v at 50 Hz")
    only_x = filter_record(noisy, 50.0, channels=("x", "a"))
    np.testing.assert_array_equal(only_x.f, noisy.f)
    assert filter_record(noisy, 50.0, channels=("a",)) is noisy
    with pytest.raises(ModelSpecError, match="valid channels are f, x, v, a"):
        filter_record(noisy, 50.0, channels=("t",))
    with pytest.raises(ModelSpecError, match="`f_cut_hz`"):
        filter_record(noisy, 400.0)


def test_module_constants_are_read_only():
    with pytest.raises(TypeError):
        signals.SAVGOL_POLYORDER[1] = 3  # type: ignore[index]
