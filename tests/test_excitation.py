"""Excitation signals (nlid_core.excitation): sweep laws, multisine properties, steps, validation."""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pandas as pd
import pytest

from nlid_core import excitation as ex
from nlid_core.errors import ModelSpecError
from nlid_core.examples import chirp_force
from nlid_core.excitation import (
    EXCITATIONS,
    Excitation,
    crest_factor,
    linear_chirp,
    log_chirp,
    make_excitation,
    schroeder_multisine,
    stepped_amplitude,
    stepped_sine,
)


def _zero_crossing_frequency(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Local frequency 1/(2·half-period) at the midpoints between interpolated zero crossings."""
    i = np.flatnonzero(np.sign(y[:-1]) * np.sign(y[1:]) < 0)
    tc = t[i] - y[i] * (t[i + 1] - t[i]) / (y[i + 1] - y[i])
    return 0.5 * (tc[1:] + tc[:-1]), 0.5 / np.diff(tc)


# --------------------------------------------------------------------------- chirps


def test_linear_chirp_frequency_goes_from_f0_to_f1() -> None:
    exc = linear_chirp(1.0, 20.0, amplitude_n=5.0, duration_s=10.0, fs_hz=1000.0)
    tm, fz = _zero_crossing_frequency(exc.t_s, exc.force)
    expected = 1.0 + 19.0 * tm / 10.0
    np.testing.assert_allclose(fz, expected, rtol=2e-3, atol=2e-3)
    slope, start = np.polyfit(tm, fz, 1)  # the measured law, extrapolated to both ends
    assert start == pytest.approx(1.0, abs=0.01) and start + slope * 10.0 == pytest.approx(20.0, abs=0.01)
    assert exc.band_hz == (1.0, 20.0)
    assert exc.peak == pytest.approx(5.0, rel=1e-3)
    assert exc.rms == pytest.approx(5.0 / math.sqrt(2.0), rel=1e-2)
    assert exc.n_samples == 10000 and exc.duration_s == pytest.approx(10.0)


def test_linear_chirp_has_the_phase_law_of_the_examples() -> None:
    exc = linear_chirp(0.5, 5.0, amplitude_n=10.0, duration_s=12.0, fs_hz=500.0)
    np.testing.assert_allclose(exc.force, chirp_force(10.0, 0.5, 5.0, 12.0)(exc.t_s), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.diff(exc.t_s), 1.0 / 500.0)


def test_chirp_taper_fades_in_and_out_only_at_the_ends() -> None:
    plain = linear_chirp(0.5, 5.0, amplitude_n=10.0, duration_s=12.0, fs_hz=500.0)
    tapered = linear_chirp(0.5, 5.0, amplitude_n=10.0, duration_s=12.0, fs_hz=500.0, taper_s=1.0)
    assert tapered.force[0] == 0.0 and abs(tapered.force[-1]) < 1e-3
    inner = (tapered.t_s >= 1.0) & (tapered.t_s <= 11.0 - 1.0 / 500.0)
    np.testing.assert_array_equal(tapered.force[inner], plain.force[inner])
    assert np.all(np.abs(tapered.force) <= np.abs(plain.force) + 1e-15)
    assert tapered.settings["taper_s"] == 1.0


def test_log_chirp_spends_equal_time_per_octave() -> None:
    exc = log_chirp(1.0, 16.0, amplitude_n=2.0, duration_s=8.0, fs_hz=1000.0)
    tm, fz = _zero_crossing_frequency(exc.t_s, exc.force)
    # times at which the local frequency passes 2, 4, 8 Hz: one octave every 2 s
    crossings = [float(np.interp(math.log2(f), np.log2(fz), tm)) for f in (2.0, 4.0, 8.0)]
    np.testing.assert_allclose(crossings, [2.0, 4.0, 6.0], atol=0.02)
    octaves_per_s, start = np.polyfit(tm, np.log2(fz), 1)
    assert octaves_per_s == pytest.approx(0.5, rel=1e-3) and start == pytest.approx(0.0, abs=1e-3)
    assert exc.settings["octaves"] == pytest.approx(4.0)
    assert exc.settings["s_per_octave"] == pytest.approx(2.0)


# --------------------------------------------------------------------------- multisine


def test_schroeder_multisine_crest_band_rms() -> None:
    exc = schroeder_multisine(1.0, 100.0, rms_n=3.0, duration_s=1.0, fs_hz=1000.0)
    assert exc.settings["n_lines"] == 100
    assert exc.crest_factor < 1.8
    assert exc.settings["crest_factor"] == pytest.approx(exc.crest_factor)
    assert exc.rms == pytest.approx(3.0, rel=0.01)
    freq, amp = exc.spectrum()
    power = amp**2
    in_band = (freq >= 1.0 - 1e-9) & (freq <= 100.0 + 1e-9)
    assert power[in_band].sum() / power.sum() > 0.99
    lines = amp[in_band]
    np.testing.assert_allclose(lines, lines[0], rtol=1e-9)  # equal amplitude on every line
    assert lines[0] == pytest.approx(3.0 * math.sqrt(2.0 / 100), rel=1e-9)


def test_multisine_amplitude_is_the_rms_and_the_names_are_exclusive() -> None:
    a = schroeder_multisine(2.0, 40.0, amplitude_n=1.5, duration_s=2.0, fs_hz=400.0)
    b = schroeder_multisine(2.0, 40.0, rms_n=1.5, duration_s=2.0, fs_hz=400.0)
    np.testing.assert_array_equal(a.force, b.force)
    assert a.rms == pytest.approx(1.5, rel=1e-9)
    for kwargs in ({}, {"amplitude_n": 1.0, "rms_n": 1.0}):
        with pytest.raises(ModelSpecError, match="amplitude_n.*rms_n"):
            schroeder_multisine(2.0, 40.0, duration_s=2.0, fs_hz=400.0, **kwargs)  # type: ignore[arg-type]


def test_multisine_is_exactly_periodic() -> None:
    exc = schroeder_multisine(0.5, 20.0, amplitude_n=1.0, duration_s=8.0, fs_hz=200.0, periods=2)
    n = exc.settings["period_samples"]
    assert n == 800 and exc.n_samples == 1600
    np.testing.assert_array_equal(exc.force[:n], exc.force[n:])
    assert exc.settings["period_s"] == pytest.approx(4.0)
    # the period itself wraps smoothly: the sample after the last is the first again
    assert abs(exc.force[-1] - exc.force[0]) < 2 * np.pi * 20.0 * exc.peak / 200.0


def test_multisine_odd_lines_and_random_phases() -> None:
    odd = schroeder_multisine(1.0, 100.0, amplitude_n=1.0, duration_s=1.0, fs_hz=1000.0, odd_only=True)
    freq, amp = odd.spectrum()
    excited = freq[amp > 1e-9 * amp.max()]
    assert np.all(np.round(excited) % 2 == 1) and excited.size == 50 == odd.settings["n_lines"]
    r1 = schroeder_multisine(1.0, 100.0, amplitude_n=1.0, duration_s=1.0, fs_hz=1000.0, phases="random", rng=5)
    r2 = schroeder_multisine(1.0, 100.0, amplitude_n=1.0, duration_s=1.0, fs_hz=1000.0, phases="random",
                             rng=np.random.default_rng(5))
    np.testing.assert_array_equal(r1.force, r2.force)
    assert r1.rms == pytest.approx(1.0, rel=1e-9)
    assert r1.settings["phases"] == "random" and r1.settings["rng"] == 5


# --------------------------------------------------------------------------- stepped signals


def test_stepped_sine_has_each_frequency_in_its_dwell() -> None:
    freqs = [2.0, 7.5, 4.0, 12.0]
    fs, dwell = 200.0, 3.0
    exc = stepped_sine(freqs, amplitude_n=2.0, dwell_s=dwell, fs_hz=fs, ramp_s=0.2)
    n_dwell = round(dwell * fs)
    assert exc.n_samples == n_dwell * len(freqs)
    df = fs / n_dwell
    for j, f in enumerate(freqs):
        seg = exc.force[j * n_dwell : (j + 1) * n_dwell]
        spec = np.abs(np.fft.rfft(seg * np.hanning(n_dwell)))
        peak = np.fft.rfftfreq(n_dwell, 1 / fs)[int(np.argmax(spec))]
        assert abs(peak - f) <= df, (j, f, peak)
    # phase-continuous: no sample-to-sample jump larger than the steepest sine allows
    assert np.max(np.abs(np.diff(exc.force))) <= 2 * np.pi * max(freqs) * 2.0 / fs * 1.01
    assert exc.force[0] == 0.0 and abs(exc.force[-1]) < 0.1
    assert exc.settings["band_hz"] == (2.0, 12.0)
    assert exc.settings["segment_starts_s"] == (0.0, 3.0, 6.0, 9.0)


def test_stepped_amplitude_scales_rms_by_the_levels() -> None:
    base = linear_chirp(1.0, 10.0, amplitude_n=4.0, duration_s=5.0, fs_hz=200.0, taper_s=0.5)
    levels = (0.25, 1.0, 2.5)
    exc = stepped_amplitude(base, levels, pause_s=0.5)
    slices = exc.settings["level_slices"]
    assert len(slices) == 3 and exc.settings["levels"] == levels
    for (a, b), level in zip(slices, levels):
        assert b - a == base.n_samples
        seg = exc.force[a:b]
        assert math.sqrt(float(np.mean(seg**2))) == pytest.approx(level * base.rms, rel=1e-12)
    for (_, b), (a, _) in zip(slices[:-1], slices[1:]):
        assert a - b == 100 and np.all(exc.force[b:a] == 0.0)  # the pauses
    assert exc.n_samples == 3 * base.n_samples + 2 * 100
    assert exc.settings["level_bounds_s"][1] == pytest.approx((5.5, 10.5))
    assert exc.band_hz == base.band_hz and exc.settings["base_kind"] == "linear_chirp"


# --------------------------------------------------------------------------- the Excitation type


def test_excitation_frame_spectrum_and_crest_factor() -> None:
    exc = linear_chirp(1.0, 10.0, amplitude_n=1.0, duration_s=2.0, fs_hz=100.0)
    frame = exc.to_frame()
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == ["t", "f"]
    np.testing.assert_array_equal(frame["f"].to_numpy(), exc.force)
    frame.loc[0, "f"] = 99.0
    assert exc.force[0] == 0.0  # the frame is a copy
    t = np.arange(400) / 100.0
    sine = Excitation(t_s=t, force=3.0 * np.sin(2 * np.pi * 5.0 * t), fs_hz=100.0)
    freq, amp = sine.spectrum()
    k = int(np.argmax(amp))
    assert freq[k] == pytest.approx(5.0) and amp[k] == pytest.approx(3.0, rel=1e-9)
    assert crest_factor(sine.force) == pytest.approx(math.sqrt(2.0), rel=1e-3)
    assert sine.kind == "custom" and sine.band_hz[0] <= 5.0 <= sine.band_hz[1]
    assert math.isnan(crest_factor(np.zeros(10)))
    with pytest.raises(ModelSpecError, match="`y`"):
        crest_factor([])


def test_excitation_checks_its_arrays() -> None:
    t = np.arange(200) / 100.0
    with pytest.raises(ModelSpecError, match="`t_s` and `force`"):
        Excitation(t_s=t, force=np.zeros(199), fs_hz=100.0)
    with pytest.raises(ModelSpecError, match="`t_s`"):
        Excitation(t_s=t, force=np.zeros(200), fs_hz=50.0)
    with pytest.raises(ModelSpecError, match="`force`"):
        Excitation(t_s=t, force=np.full(200, np.nan), fs_hz=100.0)
    with pytest.raises(ModelSpecError, match="`fs_hz`"):
        Excitation(t_s=t, force=np.zeros(200), fs_hz=-1.0)


def test_an_excitation_drives_the_simulator() -> None:
    from nlid_core.models import TermModel
    from nlid_core.simulate import simulate

    exc = linear_chirp(0.5, 10.0, amplitude_n=10.0, duration_s=4.0, fs_hz=200.0, taper_s=0.2)
    res = simulate(TermModel("m0,c1,k1"), exc.t_s, exc.force, [1.0, 1.0, 1000.0])
    assert res.success and np.all(np.isfinite(res.x)) and res.x.shape == exc.t_s.shape


# --------------------------------------------------------------------------- validation and dispatch


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: linear_chirp(5.0, 1.0, amplitude_n=1.0, duration_s=10.0, fs_hz=100.0), "f1_hz"),
        (lambda: linear_chirp(1.0, 30.0, amplitude_n=1.0, duration_s=10.0, fs_hz=100.0), "f1_hz"),
        (lambda: linear_chirp(-1.0, 5.0, amplitude_n=1.0, duration_s=10.0, fs_hz=100.0), "f0_hz"),
        (lambda: linear_chirp(1.0, 5.0, amplitude_n=0.0, duration_s=10.0, fs_hz=100.0), "amplitude_n"),
        (lambda: linear_chirp(1.0, 5.0, amplitude_n=1.0, duration_s=0.5, fs_hz=100.0), "duration_s"),
        (lambda: linear_chirp(1.0, 5.0, amplitude_n=1.0, duration_s=10.0, fs_hz=float("nan")), "fs_hz"),
        (lambda: linear_chirp(1.0, 5.0, amplitude_n=1.0, duration_s=10.0, fs_hz=100.0, taper_s=6.0), "taper_s"),
        (lambda: log_chirp(0.0, 5.0, amplitude_n=1.0, duration_s=10.0, fs_hz=100.0), "f0_hz"),
        (lambda: schroeder_multisine(1.0, 5.0, amplitude_n=1.0, duration_s=10.0, fs_hz=100.0, periods=0),
         "periods"),
        (lambda: schroeder_multisine(1.0, 5.0, amplitude_n=1.0, duration_s=10.0, fs_hz=100.0, phases="flat"),
         "phases"),
        (lambda: schroeder_multisine(1.1, 1.2, amplitude_n=1.0, duration_s=2.0, fs_hz=100.0), "f0_hz"),
        (lambda: schroeder_multisine(1.0, 5.0, amplitude_n=1.0, duration_s=10.0, fs_hz=100.0,
                                     rng="x"),  # type: ignore[arg-type]
         "rng"),
        (lambda: stepped_sine([], amplitude_n=1.0, dwell_s=2.0, fs_hz=100.0), "frequencies_hz"),
        (lambda: stepped_sine([2.0, 50.0], amplitude_n=1.0, dwell_s=2.0, fs_hz=100.0), "frequencies_hz"),
        (lambda: stepped_sine([0.2, 2.0], amplitude_n=1.0, dwell_s=2.0, fs_hz=100.0), "dwell_s"),
        (lambda: stepped_sine([2.0], amplitude_n=1.0, dwell_s=2.0, fs_hz=100.0, ramp_s=1.5), "ramp_s"),
        (lambda: stepped_amplitude(np.zeros(5), [1.0]), "base"),  # type: ignore[arg-type]
        (lambda: stepped_amplitude(_base(), [1.0, -2.0]), "levels"),
        (lambda: stepped_amplitude(_base(), []), "levels"),
        (lambda: stepped_amplitude(_base(), [1.0], pause_s=-1.0), "pause_s"),
    ],
)
def test_bad_settings_name_the_argument(call, name) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ModelSpecError, match=re.escape(f"`{name}`")):
        call()


def _base() -> Excitation:
    return linear_chirp(1.0, 5.0, amplitude_n=1.0, duration_s=2.0, fs_hz=100.0)


def test_make_excitation_dispatches_and_checks_names() -> None:
    settings = {"f0_hz": 1.0, "f1_hz": 5.0, "amplitude_n": 1.0, "duration_s": 2.0, "fs_hz": 100.0}
    for kind in ("linear_chirp", "log_chirp"):
        exc = make_excitation(kind, settings)
        assert exc.kind == kind
        np.testing.assert_array_equal(exc.force, EXCITATIONS[kind](**settings).force)
    ms = make_excitation("schroeder_multisine", {**settings, "periods": 2})
    assert ms.kind == "schroeder_multisine" and ms.settings["periods"] == 2
    st = make_excitation("stepped_sine", {"frequencies_hz": [2.0, 3.0], "amplitude_n": 1.0, "dwell_s": 1.0,
                                          "fs_hz": 100.0})
    assert st.kind == "stepped_sine"
    sa = make_excitation("stepped_amplitude", {"base": {"kind": "linear_chirp", "settings": settings},
                                               "levels": [1.0, 2.0]})
    assert sa.kind == "stepped_amplitude" and sa.settings["base_kind"] == "linear_chirp"
    with pytest.raises(ModelSpecError, match="valid kinds are linear_chirp, log_chirp"):
        make_excitation("white_noise", settings)
    with pytest.raises(ModelSpecError, match="unknown `settings`.*f2_hz"):
        make_excitation("linear_chirp", {**settings, "f2_hz": 3.0})
    with pytest.raises(ModelSpecError, match="missing `settings`.*fs_hz"):
        make_excitation("linear_chirp", {k: v for k, v in settings.items() if k != "fs_hz"})
    with pytest.raises(ModelSpecError, match="`f1_hz`"):
        make_excitation("linear_chirp", {**settings, "f1_hz": 0.5})


def test_every_public_function_documents_its_parameters() -> None:
    for name in ex.__all__:
        obj = getattr(ex, name)
        if not inspect.isfunction(obj):
            continue
        doc = inspect.getdoc(obj) or ""
        missing = [p for p in inspect.signature(obj).parameters
                   if not re.search(rf"(?<!\w){re.escape(p)}(?!\w)", doc)]
        assert not missing, (name, missing)
    assert set(EXCITATIONS) == {"linear_chirp", "log_chirp", "schroeder_multisine", "stepped_sine",
                                "stepped_amplitude"}


# --------------------------------------------------------------------------- units of the force
def test_generators_keep_the_force_unit_of_a_volt_record() -> None:
    sweep = linear_chirp(1.0, 50.0, amplitude_n=0.1, duration_s=2.0, fs_hz=610.3515625, force_unit="V")
    assert sweep.force_unit == "V" and "0.1 V" in sweep.description and " N" not in sweep.description
    assert log_chirp(1.0, 50.0, amplitude_n=0.1, duration_s=2.0, fs_hz=610.0, force_unit="V").force_unit == "V"
    ms = schroeder_multisine(1.0, 50.0, rms_n=0.05, duration_s=2.0, fs_hz=610.0, force_unit="V")
    assert ms.force_unit == "V" and "0.05 V rms" in ms.description
    steps = stepped_sine([5.0, 10.0], amplitude_n=0.2, dwell_s=1.0, fs_hz=610.0, force_unit="V")
    assert steps.force_unit == "V" and "0.2 V" in steps.description
    assert stepped_amplitude(sweep, [0.5, 1.0]).force_unit == "V"  # a level sequence keeps its base's unit
    assert linear_chirp(1.0, 5.0, amplitude_n=3.0, duration_s=2.0, fs_hz=100.0).force_unit == "N"  # SI default
    with pytest.raises(ModelSpecError, match=r"amplitude_n.*\(V\)|\(V\).*amplitude_n"):
        linear_chirp(1.0, 50.0, amplitude_n=-1.0, duration_s=2.0, fs_hz=610.0, force_unit="V")
