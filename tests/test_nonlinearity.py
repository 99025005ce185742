"""Evidence of nonlinearity (nlid_core.nonlinearity): spectra, harmonics, FRF, restoring force, summary."""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pytest

from nlid_core.errors import DataValidationError, ModelSpecError
from nlid_core.examples import ExampleSpec, chirp_force, generate
from nlid_core.models import TermModel
from nlid_core.nonlinearity import (
    HARMONIC_DB,
    FRF,
    HarmonicAnalysis,
    LinearCheck,
    RestoringForce,
    Spectrum,
    evidence_summary,
    excitation_band,
    power_band,
    frf,
    harmonic_distortion,
    linear_fit_check,
    local_amplitude,
    restoring_force,
    spectrogram,
    spectrum,
    welch_psd,
)
from nlid_core.record import from_arrays
from nlid_core.simulate import simulate
from nlid_core.terms import evidence_terms

TINY_NOISE = {"x": 1e-7, "v": 1e-6, "a": 1e-5}
LINEAR = {"m0": 2.0, "c1": 4.0, "k1": 800.0}


def _simulated(terms: dict[str, float], *, name: str, amplitude: float = 10.0, f1_hz: float = 5.0,
               duration_s: float = 12.0, fs_hz: float = 500.0):
    """A chirp test (0.5 Hz -> f1_hz) simulated by the compiled integrator (faster than examples.generate)."""
    model = TermModel(tuple(terms))
    theta = np.array([terms[n] for n in model.terms])
    t = np.linspace(0.0, duration_s, int(duration_s * fs_hz))
    f = chirp_force(amplitude, 0.5, f1_hz, duration_s)(t)
    sim = simulate(model, t, f, theta)
    assert sim.success
    return from_arrays(t, f, sim.x, sim.v, sim.a, name=name)


@pytest.fixture(scope="module")
def clean_linear():
    """The linear system from examples.generate (exact solution, no noise)."""
    return generate(ExampleSpec(terms=LINEAR, noise={}), name="clean")


@pytest.fixture(scope="module")
def linear_record(clean_linear):
    """The same with tiny measurement noise."""
    rng = np.random.default_rng(7)
    noisy = {c: getattr(clean_linear, c) + sd * rng.standard_normal(clean_linear.n) for c, sd in TINY_NOISE.items()}
    return from_arrays(clean_linear.t, clean_linear.f, noisy["x"], noisy["v"], noisy["a"], name="linear")


@pytest.fixture(scope="module")
def k2_record():
    return _simulated({**LINEAR, "k2": 4000.0}, name="asymmetric")


@pytest.fixture(scope="module")
def seed(seed_record):
    return seed_record


# --------------------------------------------------------------------------- harmonics


def test_linear_system_has_no_harmonic_above_threshold(linear_record):
    h = harmonic_distortion(linear_record)
    assert isinstance(h, HarmonicAnalysis)
    assert h.levels_db.shape == (h.time_s.size, 4) and h.harmonics == (2, 3, 4, 5)
    assert h.n_valid >= 8
    assert np.nanmax(h.levels_db) < HARMONIC_DB
    assert h.sweep_rate_hz_s == pytest.approx(4.5 / 12, rel=0.05)  # chirp 0.5 -> 5 Hz over 12 s
    summary = evidence_summary(linear_record, harmonics=h)
    assert any("looks linear" in s for s in summary), summary
    assert not any("harmonic of x reaches" in s and "only where" not in s for s in summary), summary


def test_seed_shows_a_third_harmonic(seed):
    h = harmonic_distortion(seed)
    level, t_peak, f_peak = h.sustained_peak(3)
    assert level > HARMONIC_DB
    assert 0 < t_peak < seed.duration and 0.5 <= f_peak <= 5.0
    summary = evidence_summary(seed, harmonics=h)
    assert any("3rd harmonic" in s for s in summary), summary
    assert not any(s.startswith("even harmonics") for s in summary), summary  # the seed has odd terms only
    assert any("hardening" in s for s in summary), summary


def test_asymmetric_stiffness_shows_an_even_harmonic(k2_record):
    h = harmonic_distortion(k2_record)
    assert h.sustained_peak(2)[0] > HARMONIC_DB
    assert h.sustained_peak(2)[0] > h.sustained_peak(3)[0]
    summary = evidence_summary(k2_record, harmonics=h)
    assert any(s.startswith("even harmonics (2nd") for s in summary), summary
    assert any("adding k2" in s for s in summary), summary


def test_instantaneous_fundamental_follows_the_chirp(linear_record):
    h = harmonic_distortion(linear_record, window_s=1.0)
    expected = 0.5 + 4.5 * h.time_s / 12.0
    assert np.allclose(h.f0_hz[h.valid], expected[h.valid], rtol=0.02)
    assert h.window_s == pytest.approx(1.0, rel=1e-3)
    assert np.all(h.tonal_fraction[h.valid] > 0.95)


def test_stepped_sine_windows_across_a_step_are_invalid():
    fs = 500.0
    t = np.arange(int(16 * fs)) / fs
    freq = np.repeat([1.5, 2.5, 4.0, 6.0], t.size // 4)
    f = 10 * np.sin(2 * np.pi * np.cumsum(freq) / fs)
    model = TermModel("m0,c1,k1,k3")
    sim = simulate(model, t, f, np.array([2.0, 4.0, 800.0, 2e4]))
    rec = from_arrays(t, f, sim.x, sim.v, sim.a, name="stepped")
    h = harmonic_distortion(rec)
    assert abs(h.sweep_rate_hz_s) < 0.05
    assert 0 < h.n_valid < h.valid.size  # windows spanning a frequency step are dropped
    steps = np.array([4.0, 8.0, 12.0])
    across = np.array([np.any(np.abs(steps - tc) < 0.45 * h.window_s) for tc in h.time_s])
    assert not np.any(h.valid & across)
    assert np.allclose(h.f0_hz[h.valid], np.interp(h.time_s[h.valid], t, freq), rtol=0.01)
    assert np.nanmax(h.force_levels_db) < -60  # a clean sine: no exciter distortion reported


def test_broadband_force_gives_no_harmonic_levels(rng):
    fs = 200.0
    t = np.arange(4000) / fs
    f = rng.standard_normal(t.size)
    model = TermModel("m0,c1,k1")
    sim = simulate(model, t, f, np.array([1.0, 2.0, 400.0]))
    rec = from_arrays(t, f, sim.x, sim.v, sim.a, name="random")
    h = harmonic_distortion(rec)
    assert h.n_valid == 0 and np.all(np.isnan(h.levels_db))
    summary = evidence_summary(rec, harmonics=h, run_output_check=False)
    # a random force: the best linear approximation by segment averaging replaces the harmonic analysis,
    # and says that its spread cannot tell noise from distortion
    assert any("segment averaging" in s and "cannot tell" in s for s in summary), summary
    assert not any("not a single tone" in s for s in summary), summary


def test_harmonic_distortion_validates_its_arguments(seed):
    with pytest.raises(ModelSpecError, match="n_harmonics"):
        harmonic_distortion(seed, n_harmonics=1)
    with pytest.raises(ModelSpecError, match="window_s"):
        harmonic_distortion(seed, window_s=-1.0)
    with pytest.raises(DataValidationError, match="window_s"):
        harmonic_distortion(seed, window_s=100.0)
    with pytest.raises(ModelSpecError, match="channel"):
        harmonic_distortion(seed, channel="f")
    with pytest.raises(DataValidationError, match="rec"):
        harmonic_distortion(seed.x)  # type: ignore[arg-type]
    h = harmonic_distortion(seed)
    with pytest.raises(ModelSpecError, match="k"):
        h.level(7)


# --------------------------------------------------------------------------- spectra and FRF


def test_spectrum_and_excitation_band(seed):
    spec = spectrum(seed, channels=("f", "x", "v", "a"))
    assert isinstance(spec, Spectrum)
    assert set(spec.psd) == {"f", "x", "v", "a"}
    assert spec.psd_unit("x") == "m^2/Hz" and spec.psd_unit("a") == "(m/s^2)^2/Hz"
    # Parseval: the PSD integrates to the variance
    df = spec.freq_hz[1] - spec.freq_hz[0]
    assert np.sum(spec.psd["f"]) * df == pytest.approx(np.var(seed.f), rel=0.05)
    lo, hi = excitation_band(seed)
    assert 0.4 < lo < 0.7 and 4.6 < hi < 5.2  # chirp 0.5 -> 5 Hz
    assert spec.band_hz == pytest.approx((lo, hi))
    only_x = from_arrays(seed.t, seed.f, seed.x)  # missing channels are skipped
    assert set(spectrum(only_x, channels=("x", "v")).psd) == {"x"}


def test_spectrum_validates_its_arguments(seed):
    with pytest.raises(ModelSpecError, match="channels"):
        spectrum(seed, channels=("q",))
    with pytest.raises(DataValidationError, match="channels"):
        spectrum(from_arrays(seed.t, seed.f, seed.x), channels=("a",))
    with pytest.raises(DataValidationError, match="nperseg"):
        spectrum(seed, nperseg=seed.n + 1)
    with pytest.raises(ModelSpecError, match="nperseg"):
        spectrum(seed, nperseg=2)
    constant = from_arrays(seed.t, np.ones(seed.n), seed.x)
    with pytest.raises(DataValidationError, match="`f`"):
        excitation_band(constant)


def test_frf_of_a_linear_system_peaks_at_the_natural_frequency(linear_record):
    h = frf(linear_record)
    assert isinstance(h, FRF) and h.unit == "m/N" and h.h.dtype == np.complex128
    fn = math.sqrt(LINEAR["k1"] / LINEAR["m0"]) / (2 * math.pi)
    assert h.peak_hz(h.band_hz) == pytest.approx(fn, rel=0.03)
    # against the exact response 1 / (k1 - m0 ω² + i c1 ω) inside the band, away from its edges
    sel = (h.freq_hz > 0.8) & (h.freq_hz < 4.5)
    w = 2 * np.pi * h.freq_hz[sel]
    exact = 1.0 / (LINEAR["k1"] - LINEAR["m0"] * w**2 + 1j * LINEAR["c1"] * w)
    assert np.median(np.abs(h.h[sel] / exact - 1)) < 0.05
    assert h.magnitude_db.shape == h.freq_hz.shape and h.phase_deg.shape == h.freq_hz.shape


def test_frf_with_several_segments_has_high_coherence_in_band():
    rec = _simulated(LINEAR, name="long", duration_s=40.0)
    h = frf(rec, nperseg=4096)
    assert h.nperseg == 4096
    fn = math.sqrt(LINEAR["k1"] / LINEAR["m0"]) / (2 * math.pi)
    assert h.peak_hz(h.band_hz) == pytest.approx(fn, rel=0.03)
    in_band = (h.freq_hz > 1.0) & (h.freq_hz < 4.5)
    assert np.median(h.coherence[in_band]) > 0.95


def test_spectrogram_shapes(seed):
    times, freqs, power = spectrogram(seed)
    assert power.shape == (freqs.size, times.size)
    assert freqs.max() <= 8 * 5.2 and times.min() > 0 and times.max() < seed.duration
    band = (freqs > 3.5) & (freqs < 5.5)
    assert np.argmax(power[band].max(axis=0)) > times.size // 2  # the response grows along the sweep
    with pytest.raises(ModelSpecError, match="channel"):
        spectrogram(seed, "t")


# --------------------------------------------------------------------------- restoring force and models


def test_restoring_force_of_a_noise_free_linear_record(clean_linear):
    rec = clean_linear
    rf = restoring_force(rec, mass=LINEAR["m0"])
    assert isinstance(rf, RestoringForce) and rf.mass_source == "given"
    expected = LINEAR["c1"] * rec.v + LINEAR["k1"] * rec.x
    assert np.max(np.abs(rf.force - expected)) <= 1e-6 * np.max(np.abs(expected))
    est = restoring_force(rec)
    assert est.mass == pytest.approx(LINEAR["m0"], rel=1e-6)
    assert est.mass_unit == "N·s^2/m" and "m0" in est.mass_source
    lin = restoring_force(rec, mass_terms="m0,c1,k1")
    assert lin.mass == pytest.approx(LINEAR["m0"], rel=1e-6)


def test_restoring_force_default_mass_is_close_on_a_nonlinear_record(seed):
    assert restoring_force(seed).mass == pytest.approx(2.0, rel=0.05)


def test_restoring_force_needs_acceleration(seed):
    no_a = from_arrays(seed.t, seed.f, seed.x, seed.v, name="no-a")
    with pytest.raises(DataValidationError, match="`a`"):
        restoring_force(no_a)
    with pytest.raises(ModelSpecError, match="mass"):
        restoring_force(seed, mass=-1.0)
    with pytest.raises(ModelSpecError, match="mass_terms"):
        restoring_force(seed, mass_terms="c1,k1")


def test_linear_fit_check_compares_terms(seed):
    chk = linear_fit_check(seed)
    assert isinstance(chk, LinearCheck)
    assert [r.label for r in chk.rows] == ["linear", *(f"linear + {t}" for t in evidence_terms())]
    assert {"k3", "c2", "k2"} <= set(evidence_terms())
    assert chk.candidate("k3").nrmse < 0.3 * chk.linear.nrmse
    assert chk.improvement("k3") > 0.7
    assert chk.candidate("k3").values["k3"] == pytest.approx(2e4, rel=0.1)
    rows = chk.to_rows()
    assert rows[1]["model"] == f"linear + {evidence_terms()[0]}" and "force_nrmse" in rows[1]
    with pytest.raises(ModelSpecError, match="candidates"):
        linear_fit_check(seed, candidates=("k1",))
    with pytest.raises(ModelSpecError, match="candidates"):
        linear_fit_check(seed, candidates=("zz",))


def test_softening_record_summary():
    full = _simulated({"m0": 1.5, "c1": 0.8, "k1": 1500.0, "k3": -2.0e5}, name="softening", amplitude=4.0,
                      f1_hz=8.0, duration_s=10.0, fs_hz=400.0)
    rec = from_arrays(full.t, full.f, full.x, name="softening-x")  # only x: v, a are derived inside
    summary = evidence_summary(rec)
    assert any("softening" in s for s in summary), summary
    assert any("adding k3 lowers" in s for s in summary), summary


def test_power_band_of_a_tone():
    t = np.arange(20_000) / 1000.0
    lo, hi = power_band(np.sin(2 * np.pi * 7.3 * t), 1000.0)
    assert 7.0 < lo < 7.3 < hi < 7.6
    with pytest.raises(ModelSpecError, match="fractions"):
        power_band(np.sin(t), 1000.0, fractions=(0.9, 0.1))
    with pytest.raises(DataValidationError, match="`y`"):
        power_band(np.ones(100), 1000.0)


def test_local_amplitude_of_a_sine():
    t = np.linspace(0, 10, 5001)
    env = local_amplitude(3.0 * np.sin(2 * np.pi * 2.0 * t))
    assert np.allclose(env[500:-500], 3.0, rtol=1e-3)
    assert np.all(np.abs(local_amplitude(3.0 * np.sin(2 * np.pi * 2.13 * t + 0.7))[1000:-1000] - 3.0) < 0.1)


def test_welch_psd_validates(rng):
    with pytest.raises(DataValidationError, match="`y`"):
        welch_psd(np.ones((3, 3)), 10.0)
    with pytest.raises(ModelSpecError, match="fs"):
        welch_psd(rng.standard_normal(100), 0.0)


def test_large_record_is_fast():
    fs = 1000.0
    n = 100_000
    t = np.arange(n) / fs
    phase = 2 * np.pi * (0.5 * t + 0.5 * 19.5 / t[-1] * t * t)
    f = 10 * np.sin(phase)
    x = 0.01 * np.sin(phase - 0.3) + 3e-4 * np.sin(3 * phase)
    v = np.gradient(x, t)
    a = np.gradient(v, t)
    rec = from_arrays(t, f, x, v, a, name="big")
    for fn in (spectrum, excitation_band, harmonic_distortion, frf, restoring_force, linear_fit_check, spectrogram):
        start = time.process_time()  # CPU time: a busy machine does not count against it
        fn(rec)
        assert time.process_time() - start < 2.0, fn.__name__
    h = harmonic_distortion(rec)
    assert np.nanmedian(h.level(3)) == pytest.approx(20 * math.log10(0.03), abs=1.0)


def test_equivalent_linear_parameters_drift_for_a_hardening_spring_only():
    from nlid_core.examples import SEED_TRUTH, ExampleSpec, generate
    from nlid_core.nonlinearity import equivalent_linear, level_drift_summary

    def levels(terms):
        return [generate(ExampleSpec(terms=terms, amplitude_n=a, noise={"x": 1e-5}, measured=("x",), seed=i),
                         name=f"{a}N") for i, a in enumerate((3.0, 10.0, 25.0))]

    hard = equivalent_linear(levels(SEED_TRUTH))
    assert [e.record for e in hard] == ["3.0N", "10.0N", "25.0N"]
    assert hard[-1].f_n_hz > 1.2 * hard[0].f_n_hz
    assert "hardening" in " ".join(level_drift_summary(hard))
    lin = equivalent_linear(levels({"m0": 2.0, "c1": 0.5, "k1": 800.0}))
    assert abs(lin[-1].f_n_hz / lin[0].f_n_hz - 1) < 0.02
    assert "no trend" in level_drift_summary(lin)[0]  # the change is inside its standard error
    assert all(math.isfinite(e.f_n_se) and e.f_n_se > 0 for e in (*hard, *lin))


def test_two_tone_intermodulation_appears_only_with_a_nonlinearity():
    import numpy as np

    from nlid_core.models import TermModel
    from nlid_core.nonlinearity import two_tone_products
    from nlid_core.record import from_arrays
    from nlid_core.simulate import simulate

    fs, f1, f2 = 200.0, 3.0, 4.0
    t = np.arange(int(40 * fs)) / fs
    force = 10 * np.sin(2 * np.pi * f1 * t) + 10 * np.sin(2 * np.pi * f2 * t)
    for theta, expect_products in (([2.0, 5.0, 800.0, 0.0], False), ([2.0, 5.0, 800.0, 3e5], True)):
        sim = simulate(TermModel("m0,c1,k1,k3"), t, force, theta, substeps=2)
        half = t.size // 2  # steady state
        rec = from_arrays(t[half:], force[half:], sim.x[half:])
        lines = {(ln.p, ln.q): ln.level_db for ln in two_tone_products(rec, f1, f2)}
        level = lines[(2, -1)]  # 2·f1 − f2 = 2 Hz
        assert (level > -40) == expect_products, level


def test_restoring_surface_bins_cover_the_data():
    import numpy as np

    from nlid_core.examples import make_example
    from nlid_core.nonlinearity import restoring_force, restoring_surface

    rf = restoring_force(make_example("seed"))
    surf = restoring_surface(rf, nx=20, nv=15)
    assert surf.force.shape == (15, 20)
    assert int(surf.count.sum()) == rf.x.size
    assert np.isfinite(surf.force).any()


def test_model_restoring_surface_is_the_model_force_on_the_cell_centres():
    from nlid_core.nonlinearity import RestoringForce, RestoringSurface, model_restoring_surface

    surf = RestoringSurface(x_centers=np.array([-1.0, 0.0, 2.0]), v_centers=np.array([-0.5, 0.5]),
                            force=np.zeros((2, 3)), count=np.zeros((2, 3), dtype=np.int64), units={})
    model = TermModel("m0,c1,k1,k3")
    grid = model_restoring_surface(surf, model, [2.0, 4.0, 800.0, 1e3])  # the mass does not enter
    x, v = np.meshgrid(surf.x_centers, surf.v_centers)
    assert grid.shape == (2, 3)
    np.testing.assert_allclose(grid, 4.0 * v + 800.0 * x + 1e3 * x**3)
    with pytest.raises(ModelSpecError, match="`theta` must hold 4 values"):
        model_restoring_surface(surf, model, [1.0, 2.0])
    rf = RestoringForce(t=np.zeros(1), x=np.zeros(1), v=np.zeros(1), force=np.zeros(1), mass=1.0, mass_source="given",
                        mass_unit="kg", units={})
    with pytest.raises(ModelSpecError, match="`surface` must be a RestoringSurface"):
        model_restoring_surface(rf, model, [1.0, 2.0, 3.0, 4.0])  # type: ignore[arg-type]


def test_spectrum_peak_is_the_strongest_bin_above_zero():
    freq = np.array([0.0, 1.0, 2.0, 3.0])
    spec = Spectrum(freq_hz=freq, psd={"f": np.array([9.0, 1.0, 5.0, 2.0])}, units={"f": "N"})
    assert spec.peak_hz("f") == 2.0  # the 0 Hz bin does not count
    assert spec.peak_hz("x") is None
    assert Spectrum(freq_hz=np.zeros(1), psd={"f": np.ones(1)}, units={"f": "N"}).peak_hz() is None


def test_the_baseline_roles_come_from_the_registry():
    from nlid_core.nonlinearity import DEFAULT_CANDIDATES, MASS_TERMS
    from nlid_core.nonlinearity.baseline import (
        baseline_parameter,
        cubic_stiffness,
        evidence_stiffness_terms,
        mass_term,
    )
    from nlid_core.terms import baseline_terms, get_term

    assert [baseline_parameter(r) for r in ("mass", "damping", "stiffness")] == list(baseline_terms())
    assert get_term(mass_term()).inertial and cubic_stiffness() == "k3"
    assert evidence_stiffness_terms() == ("k2", "k3")
    assert DEFAULT_CANDIDATES == evidence_terms() and set(baseline_terms()) < set(MASS_TERMS)
    with pytest.raises(ModelSpecError, match="role"):
        baseline_parameter("spring")


def test_friction_example_uses_its_velocity_scale():
    from nlid_core.examples import EXAMPLES

    spec = EXAMPLES["friction"]
    rec = generate(dataclasses.replace(spec, duration_s=2.0), name="friction")
    model = TermModel(tuple(spec.terms), spec.settings)
    theta = model.default_parameters(spec.terms).values
    assert "v_eps" in model.param_names and theta[model.param_names.index("v_eps")] == spec.settings.v_eps
    # the record satisfies the model with the example's v_eps (equation residual at noise level)
    clean = generate(dataclasses.replace(spec, duration_s=2.0, noise={}, measured=("x", "v", "a")), name="clean")
    res = clean.f - model.force(theta, clean.x, clean.v, clean.a)
    assert np.max(np.abs(res)) < 1e-6 * np.max(np.abs(clean.f))
    assert rec.n == clean.n


def test_model_restoring_surface_counts_settings_as_parameters():
    from nlid_core.nonlinearity import RestoringSurface, model_restoring_surface

    surf = RestoringSurface(x_centers=np.array([0.0, 1.0]), v_centers=np.array([-1.0, 1.0]),
                            force=np.zeros((2, 2)), count=np.zeros((2, 2), dtype=np.int64), units={})
    model = TermModel("m0,c1,fc,k1")
    theta = model.default_parameters({"m0": 1.0, "c1": 0.5, "fc": 2.0, "k1": 10.0}).values
    grid = model_restoring_surface(surf, model, theta)
    x, v = np.meshgrid(surf.x_centers, surf.v_centers)
    np.testing.assert_allclose(grid, 0.5 * v + 2.0 * np.tanh(v / model.settings.v_eps) + 10.0 * x)


def test_harmonic_markers_only_for_a_tonal_force():
    from nlid_core.nonlinearity import spectrum
    from nlid_core.record import from_arrays

    t = np.arange(20000) / 1000.0
    sine = from_arrays(t, np.sin(2 * np.pi * 12.5 * t), 1e-3 * np.sin(2 * np.pi * 12.5 * t - 0.3), name="sine")
    rng = np.random.default_rng(0)
    noise = from_arrays(t, rng.standard_normal(t.size), 1e-3 * rng.standard_normal(t.size), name="noise")
    assert spectrum(sine).tonal_hz("f") == pytest.approx(12.5, abs=0.6)
    assert spectrum(noise).tonal_hz("f") is None and spectrum(noise).peak_hz("f") is not None
