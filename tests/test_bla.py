"""Best linear approximation, detection lines, the output-error term check, restoring-force slices and level
trends with uncertainty (nlid_core.nonlinearity.bla, .detection, .output_check, .restoring, .levels).

Known answers come from Wiener systems (a resonant linear filter followed by a static nonlinearity) driven by
random-odd multisines with several periods and realisations: the linear system's FRF is exact, the cubic one
is an odd-degree and the quadratic one an even-degree nonlinearity.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import signal

from nlid_core import nonlinearity
from nlid_core.errors import DataValidationError, ModelSpecError
from nlid_core.models import TermModel
from nlid_core.nonlinearity.bla import bla, bla_findings, detect_period, periodic_layout
from nlid_core.nonlinearity.detection import excited_lines, input_kind
from nlid_core.nonlinearity.levels import EquivalentLinear, level_drift_summary
from nlid_core.nonlinearity.output_check import output_error_check
from nlid_core.nonlinearity.restoring import restoring_force, restoring_slices
from nlid_core.record import from_arrays
from nlid_core.signals import derive_missing
from nlid_core.simulate import simulate
from tests.conftest import shared_data_dir

FS = 1000.0
N = 1024


def _multisine(lines: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    spec = np.zeros(N // 2 + 1, complex)
    spec[lines] = np.exp(2j * np.pi * rng.random(lines.size))
    u = np.fft.irfft(spec, N)
    return u / np.std(u)


def wiener(kind: str, *, m: int = 6, p: int = 4, transient: int = 200, grid: str = "random-odd",
           noise: float = 1e-3, seed: int = 0):
    """Record of a Wiener system under ``m`` realisations of ``transient`` samples + ``p`` periods; the true FRF."""
    rng = np.random.default_rng(seed)
    b, a = signal.cheby1(2, 3, 2 * 100 / FS)
    k = np.arange(1, int(N * 200 / FS))
    odd = k[k % 2 == 1]
    if grid == "random-odd":  # one odd line in four left out at random, the same grid in every realisation
        groups = odd[: odd.size // 4 * 4].reshape(-1, 4)
        drop = np.random.default_rng(seed + 100).integers(0, 4, groups.shape[0])
        lines = np.array([g[j] for g, d in zip(groups, drop) for j in range(4) if j != d])
    elif grid == "odd":
        lines = odd
    else:
        lines = k
    us, ys = [], []
    for _ in range(m):
        one = _multisine(lines, rng)
        u = np.concatenate([one[N - transient:], np.tile(one, p)])
        z = signal.lfilter(b, a, u)
        y = {"linear": z, "cubic": z + 0.3 * z**3, "quadratic": z + 0.3 * z**2}[kind]
        us.append(u)
        ys.append(y + noise * rng.standard_normal(u.size))
    u, y = np.concatenate(us), np.concatenate(ys)
    rec = from_arrays(np.arange(u.size) / FS, u, y, name=kind, units={"f": "V", "x": "V"})
    _, h = signal.freqz(b, a, worN=np.fft.rfftfreq(N, 1 / FS), fs=FS)
    return rec, h, lines


@pytest.fixture(scope="module")
def linear():
    return wiener("linear")


def test_layout_finds_period_realisations_and_transient(linear):
    rec, _, _ = linear
    lay = periodic_layout(rec.f, rec.x)
    assert lay.mode == "periodic" and lay.period == N and lay.n_realisations == 6 and lay.n_periods == 4
    assert lay.noise_source == "periods" and lay.auto
    block = 200 + 4 * N
    for i, s in enumerate(lay.starts):  # every period window inside its realisation, after (most of) the transient
        assert i * block + 150 <= s and s + 4 * N <= (i + 1) * block
    manual = periodic_layout(rec.f, rec.x, period=N, transient=200)
    assert not manual.auto and manual.n_periods == 4  # the transient counts from the first repeated sample
    assert np.allclose(manual.starts, [i * block + 200 for i in range(6)], atol=6)


def test_a_settling_first_period_is_dropped():
    rec, h, _ = wiener("linear", p=4, transient=0)  # no samples before the periods: the first one still settles
    b = bla(rec)
    assert b.layout.n_periods == 3 and b.layout.transient >= N - 4
    ex = b.excited
    assert np.mean(np.abs(b.g[ex] - h[ex]) < 3 * np.sqrt(b.var_noise[ex])) > 0.95 and b.nonlinear is False


def test_linear_bla_matches_the_true_frf_within_its_standard_error(linear):
    rec, h, lines = linear
    b = bla(rec)
    ex = b.excited
    assert set(np.flatnonzero(ex)) == set(lines) and b.input_kind == "random-odd"
    err = np.abs(b.g[ex] - h[ex])
    assert np.mean(err < 3 * np.sqrt(b.var_noise[ex])) > 0.95
    assert np.mean(err < 3 * np.sqrt(b.var_total[ex])) > 0.95
    s = b.stats()
    assert abs(s["total_over_noise_db"]) < 1.5 and s["significant_fraction"] < 0.05
    assert b.nonlinear is False
    assert b.detection is not None and not any(c.significant for c in b.detection.classes)
    assert all(abs(c.above_noise_db) < 1.5 for c in b.detection.classes)
    text = " ".join(bla_findings(b))
    assert "no nonlinear distortion above the noise" in text and "no energy above the noise" in text


def test_cubic_system_shows_distortion_and_odd_detection_lines():
    rec, _, _ = wiener("cubic")
    b = bla(rec)
    s = b.stats()
    assert b.nonlinear is True and s["total_over_noise_db"] > 30 and s["significant_fraction"] > 0.9
    det = b.detection
    odd_in = det.get("odd", "in band")
    even_in = det.get("even", "in band")
    assert odd_in is not None and odd_in.significant and odd_in.above_noise_db > 30
    assert even_in is not None and not even_in.significant and abs(even_in.above_noise_db) < 1.5
    assert odd_in.level > 1000 * even_in.level  # odd lines >> even lines: an odd nonlinearity
    text = " ".join(bla_findings(b))
    assert "odd-degree nonlinearity" in text and "k3" in text and "even-degree" not in text


def test_quadratic_system_excites_the_even_lines_only():
    rec, _, _ = wiener("quadratic")
    b = bla(rec)
    det = b.detection
    assert det.get("even", "in band").significant and det.get("even", "in band").above_noise_db > 30
    assert not det.get("odd", "in band").significant
    text = " ".join(bla_findings(b))
    assert "even-degree nonlinearity" in text and "k2" in text and "odd-degree" not in text


@pytest.mark.parametrize("kind, nonlinear", [("linear", False), ("cubic", True)])
def test_one_period_per_realisation_takes_the_noise_from_the_overlap(kind, nonlinear):
    rec, _, _ = wiener(kind, m=8, p=1, transient=300, grid="odd")
    b = bla(rec)
    assert b.layout.n_periods == 1 and b.layout.noise_source == "overlap" and b.input_kind == "odd"
    assert b.nonlinear is nonlinear
    odd_above = b.detection.get("odd", "above band")
    assert odd_above.significant is nonlinear


def test_random_input_falls_back_to_segment_averaging(rng):
    u = rng.standard_normal(8000)
    b_, a_ = signal.butter(2, 0.2)
    rec = from_arrays(np.arange(u.size) / FS, u, signal.lfilter(b_, a_, u), name="random")
    assert detect_period(u) is None
    b = bla(rec, n_segments=4)
    assert b.layout.mode == "segments" and b.layout.n_realisations == 4 and b.detection is None
    assert b.nonlinear is None and not b.has_noise and b.has_total
    assert "cannot tell them apart" in bla_findings(b)[0]


def test_silent_stretches_are_not_a_period(rng):
    # noise between stretches of zero input (a test rig idle before, between and after two runs): the
    # zeros repeat at any lag, but the input does not repeat
    zeros = np.zeros(3000)
    u = np.concatenate([zeros, rng.standard_normal(6000), zeros, rng.standard_normal(6000), zeros])
    assert detect_period(u) is None
    # the same bursts repeated are a period
    burst = np.concatenate([zeros, rng.standard_normal(6000)])
    assert detect_period(np.tile(burst, 3)) == burst.size


def test_a_sweep_or_a_tone_is_not_taken_for_a_multisine_period(seed_record):
    assert detect_period(seed_record.f) is None
    t = np.arange(4000) / FS
    assert detect_period(np.sin(2 * np.pi * 7.3 * t)) is None


def test_excited_lines_and_input_kind():
    p = np.full(64, 1e-8)
    p[[1, 3, 5, 9, 11, 13]] = 1.0
    ex = excited_lines(p)
    assert np.flatnonzero(ex).tolist() == [1, 3, 5, 9, 11, 13]
    assert input_kind(ex) == "random-odd"
    p[7] = 1.0
    assert input_kind(excited_lines(p)) == "odd"
    p[4] = 1.0
    assert input_kind(excited_lines(p)) == "full"
    assert input_kind(np.zeros(8, dtype=bool)) == "none"


def test_bla_validates_its_arguments(linear):
    rec, _, _ = linear
    with pytest.raises(ModelSpecError, match="output"):
        bla(rec, output="q")
    with pytest.raises(ModelSpecError, match="period"):
        bla(rec, period=3)
    with pytest.raises(DataValidationError, match="whole period"):
        bla(rec, period=N, transient=rec.n - 10)
    with pytest.raises(ModelSpecError, match="which"):
        bla(rec).level_db("nope")


def test_bla_table_columns(linear):
    rec, _, _ = linear
    cols = bla(rec).to_columns()
    assert list(cols)[:2] == ["freq_hz", "excited"] and all(len(v) == N // 2 + 1 for v in cols.values())


# --------------------------------------------------------------------------- output-error check and verdict
def test_output_error_check_names_k3_and_c2_on_the_seed_record(seed_record):
    oe = output_error_check(seed_record)
    assert oe.success and oe.selected == ("k3", "c2")
    assert oe.path[-1].score < 0.05 * oe.path[0].score
    assert "needs k3 and c2" in oe.findings()[0]


def test_output_error_check_adds_nothing_to_a_linear_system(rng):
    t = np.arange(3000) / 200.0
    f = np.sin(2 * np.pi * (0.5 * t + 0.15 * t**2))
    sim = simulate(TermModel("m0,c1,k1"), t, f, np.array([1.0, 2.0, 400.0]))
    rec = from_arrays(t, f, sim.x + 1e-6 * rng.standard_normal(t.size), name="linear")
    oe = output_error_check(rec)
    assert oe.success and oe.selected == ()
    assert "a linear model may do" in oe.findings()[0]
    with pytest.raises(ModelSpecError, match="candidates"):
        output_error_check(rec, candidates=("k1",))


def test_output_error_check_finds_an_offset_and_does_not_call_it_nonlinear(rng):
    """A force sensor with a bias: the linear system with a constant force the record does not show."""
    from nlid_core.nonlinearity.verdict import _headline

    t = np.arange(3000) / 200.0
    f = np.sin(2 * np.pi * (0.5 * t + 0.15 * t**2))
    sim = simulate(TermModel("m0,c1,k1"), t, f + 0.3, np.array([1.0, 2.0, 400.0]))
    rec = from_arrays(t, f, sim.x + 1e-6 * rng.standard_normal(t.size), name="biased")
    oe = output_error_check(rec, candidates=("k3",), offsets=("f0",))
    assert oe.success and oe.selected == ("f0",) and oe.nonlinear == ()
    assert oe.path[-1].values["f0"] == pytest.approx(-0.3, rel=1e-3)  # on the model side: m0·ẍ + … + f0 = f
    assert "also carries an offset" in oe.findings()[0]
    (head,) = _headline(None, oe)
    assert head.startswith("verdict: no nonlinear term needed") and "add f0 (model to fit: m0, c1, k1, f0)" in head


def test_verdict_on_the_seed_points_at_k3_and_c2(seed_record):
    summary = nonlinearity.evidence_summary(seed_record)
    assert summary[0].startswith("verdict: nonlinear") and "k3 and c2" in summary[0]
    assert not any("changes the linear model's force error little" in s and "reference" not in s for s in summary)


def test_restoring_slices_see_the_cubic_spring_and_nothing_on_a_linear_record(seed_record, rng):
    sl = restoring_slices(restoring_force(seed_record))
    assert sl.stiffness is not None and sl.stiffness.significant("x³") and sl.stiffness.coef[2] > 0
    assert any("cubic stiffness (k3)" in s and "hardening" in s for s in sl.findings())
    t = np.arange(6000) / 500.0
    f = 10 * np.sin(2 * np.pi * (0.5 * t + 0.1875 * t**2))
    sim = simulate(TermModel("m0,c1,k1"), t, f, np.array([2.0, 1.0, 800.0]))
    lin = derive_missing(from_arrays(t, f, sim.x + 1e-5 * rng.standard_normal(t.size), name="lin"))
    assert restoring_slices(restoring_force(lin)).findings() == ()
    with pytest.raises(ModelSpecError, match="fraction"):
        restoring_slices(restoring_force(seed_record), fraction=0.9)


# --------------------------------------------------------------------------- levels and FRF validity
def _level(name: str, level: float, fn: float, se: float) -> EquivalentLinear:
    return EquivalentLinear(record=name, x_rms=level, m0=1.0, c1=0.1, k1=(2 * math.pi * fn) ** 2, f_n_hz=fn,
                            zeta=0.05, nrmse=0.1, units={}, x_unit="V", f_n_se=se, zeta_se=0.001)


def test_a_level_change_inside_its_uncertainty_is_no_trend():
    text = level_drift_summary([_level("a", 1.0, 69.16, 0.015), _level("b", 2.0, 69.18, 0.026)])
    assert "no trend" in text[0] and "moves" not in text[0]
    text = level_drift_summary([_level("a", 1.0, 60.0, 0.1), _level("b", 2.0, 66.0, 0.1)])
    assert "hardening" in text[0]


def test_frf_is_valid_only_in_band_with_coherence(rng):
    fs = 200.0
    t = np.arange(8000) / fs
    b_, a_ = signal.butter(4, 20 / (fs / 2))
    f = signal.lfilter(b_, a_, rng.standard_normal(t.size))
    sim = simulate(TermModel("m0,c1,k1"), t, f, np.array([1.0, 2.0, 400.0]))
    h = nonlinearity.frf(from_arrays(t, f, sim.x + 1e-6 * rng.standard_normal(t.size), name="r"), nperseg=512)
    ok = h.valid()
    assert ok.any() and h.freq_hz[ok].max() <= h.band_hz[1] + 1e-9
    ph = h.valid_phase_deg()
    assert np.isnan(ph[~ok]).all() and np.isfinite(ph[ok]).all()


# --------------------------------------------------------------------------- figures
def test_bla_figures_carry_the_record_units(linear):
    from nlid_core.figures.evidence import fig_bla, fig_detection_lines, fig_restoring_slices

    rec, _, _ = linear
    b = bla(rec)
    fig = fig_bla(b)
    assert fig.layout.yaxis.title.text == "level [dB re 1 V/V]" and "Hz" in fig.layout.xaxis2.title.text
    assert [tr.name for tr in fig.data][:3] == ["G (BLA)", "nonlinear distortion", "noise"]
    det = fig_detection_lines(b)
    assert det.layout.yaxis.title.text == "x per line [dB re 1 V]"
    seg = bla(rec, period=None, n_segments=4, transient=None)
    assert seg.layout.mode == "periodic"
    with pytest.raises(DataValidationError):
        fig_bla("nope")  # type: ignore[arg-type]


def test_restoring_slice_figure(seed_record):
    from nlid_core.figures.evidence import fig_restoring_slices

    fig = fig_restoring_slices(restoring_slices(restoring_force(seed_record)))
    assert len(fig.data) == 4 and fig.layout.yaxis.title.text.endswith("[N]")


# --------------------------------------------------------------------------- Silverbox (measured, volts)
def test_silverbox_bla_and_verdict():
    data = shared_data_dir()
    path = None if data is None else data / "silverbox" / "SNLS80mV.csv"
    if path is None or not path.is_file():
        pytest.skip("Silverbox data not available (shared data directory)")
    from nlid_core.io import load_record

    rec = load_record(path, rows="40650:105712", name="silverbox-train", columns="f=V1,x=V2", units="f=V,x=V",
                      fs=1e7 / 2**14)
    b = bla(rec)
    assert b.layout.period == 8192 and b.layout.n_realisations == 7 and b.layout.noise_source == "overlap"
    assert b.input_kind == "odd" and b.nonlinear is True and b.stats()["total_over_noise_db"] > 15
    odd = b.detection.odd_distortion()
    assert odd is not None and odd.above_noise_db > 15
    assert b.detection.get("even", "above band").above_noise_db < odd.above_noise_db - 15
    summary = nonlinearity.evidence_summary(derive_missing(rec), broadband=b)
    assert "needs k3" in summary[0] and "above the noise" in summary[0]
    assert any("hardening" in s and "k3" in s for s in summary)
    # the loops' reversal step is not friction: output error does not confirm it, and the verdict says so
    assert any("does not confirm friction" in s for s in summary) and not any(s.startswith("friction:") for s in summary)


# --------------------------------------------------------------------------- command line
def test_cli_nonlinearity_prints_the_verdict_and_writes_the_bla_table(tmp_path, capsys):
    import pandas as pd

    from nlid_core.cli import main

    rec, _, _ = wiener("cubic", m=3, p=2)
    data = tmp_path / "cubic.csv"
    pd.DataFrame({"t": rec.t, "f": rec.f, "x": rec.x}).to_csv(data, index=False)
    out = tmp_path / "bla.csv"
    status = main(["nonlinearity", str(data), "--bla-csv", str(out), "--no-output-check", "--json",
                   str(tmp_path / "ev.json")])
    text = capsys.readouterr().out
    assert status == 0
    assert "verdict: nonlinear" in text and "odd-degree nonlinearity" in text and "3 realisations × 2 periods" in text
    table = pd.read_csv(out)
    assert len(table) == N // 2 + 1 and table.columns[0] == "freq_hz" and table["excited"].sum() > 50
    assert main(["nonlinearity", str(data), "--period", "3"]) == 2  # a bad period is one error line
    assert "period" in capsys.readouterr().err


def test_level_figure_does_not_blow_a_change_inside_its_error_up_into_a_slope():
    from nlid_core.figures.evidence import fig_equivalent_linear

    fig = fig_equivalent_linear([_level("a", 1.0, 69.16, 0.015), _level("b", 2.0, 69.18, 0.026)])
    lo, hi = fig.layout.yaxis.range
    assert hi - lo >= 4 * 0.02 * 69.17  # at least ± 2 × the drift threshold around the mean
    assert fig.data[0].error_y.array is not None and fig.data[0].error_y.visible


def test_frf_figure_fades_lines_that_are_not_valid(rng):
    from nlid_core.figures.evidence import fig_frf_overlay

    fs = 200.0
    t = np.arange(8000) / fs
    b_, a_ = signal.butter(4, 20 / (fs / 2))
    f = signal.lfilter(b_, a_, rng.standard_normal(t.size))
    sim = simulate(TermModel("m0,c1,k1"), t, f, np.array([1.0, 2.0, 400.0]))
    h = nonlinearity.frf(from_arrays(t, f, sim.x + 1e-4 * rng.standard_normal(t.size), name="r"), nperseg=512)
    fig = fig_frf_overlay([("r", h)], band=(0.0, math.inf))
    faded = [tr for tr in fig.data if tr.name == "r (not valid)"]
    assert faded and faded[0].opacity < 0.5
    phase = next(tr for tr in fig.data if tr.yaxis == "y2")
    assert np.isnan(np.asarray(phase.y, dtype=float)[np.asarray(phase.x) > h.band_hz[1]]).all()


def test_one_realisation_of_several_periods_gives_the_noise_and_the_detection_lines():
    rec, _, _ = wiener("cubic", m=1, p=5)
    b = bla(rec)
    assert b.layout.n_realisations == 1 and b.layout.noise_source == "periods"
    assert b.has_noise and not b.has_total and b.nonlinear is None
    text = " ".join(bla_findings(b))
    assert "needs two or more realisations" in text and "odd-degree nonlinearity" in text


def test_phase_of_many_noisy_lines_follows_the_curve_not_the_noise():
    """Thousands of lines with phase noise near ±180°: plain unwrapping drifts by many turns, the robust one
    stays on the true phase of a mass-spring-damper (0° to -180°) within the noise."""
    from nlid_core.nonlinearity._args import _unwrapped_deg

    rng = np.random.default_rng(3)
    f = np.linspace(0.01, 250.0, 40_000)
    wn, zeta = 2 * np.pi * 70.0, 0.02
    w = 2 * np.pi * f
    h = 1.0 / (wn**2 - w**2 + 2j * zeta * wn * w)
    noisy = h * np.exp(1j * rng.normal(0.0, 0.6, f.size))
    truth = np.degrees(np.angle(h))
    truth = np.where(truth > 0, truth - 360.0, truth)
    robust = _unwrapped_deg(noisy)
    assert np.ptp(np.degrees(np.unwrap(np.angle(noisy)))) > 720.0  # the naive curve wanders by turns
    assert np.median(np.abs(robust - truth)) < 40.0
    assert np.mean(np.abs(robust - truth) > 180.0) < 0.01
    small = _unwrapped_deg(h[::200])
    assert np.allclose(small, truth[::200], atol=1e-9)
