"""Identifiability studies and experiment design (nlid_core.analysis)."""

from __future__ import annotations

import dataclasses
import inspect
import re

import numpy as np
import pytest

from nlid_core import analysis
from nlid_core.errors import ModelSpecError
from nlid_core.estimate import FitOptions, equation_error, identify
from nlid_core.examples import SEED_TRUTH, make_example
from nlid_core.models import TermModel
from nlid_core.analysis import (
    chirp_design,
    compare_designs,
    monte_carlo_check,
    multistart,
    predict_uncertainty,
    profile_likelihood,
    regularisation_path,
    sensitivity_study,
    structure_check,
    suggest_design,
)

SEED_TERMS = "m0,m1,c1,c2,k1,k3"
SEED_NOISE = 4e-4


@pytest.fixture(scope="module")
def seed_fit(seed_record):
    return identify(seed_record, SEED_TERMS)


# --------------------------------------------------------------------------- API rules
def test_public_functions_name_every_parameter_in_their_docstring():
    missing = {}
    for name in analysis.__all__:
        obj = getattr(analysis, name)
        if inspect.isfunction(obj):
            doc = inspect.getdoc(obj) or ""
            absent = [p for p in inspect.signature(obj).parameters
                      if not re.search(rf"(?<!\w){re.escape(p)}(?!\w)", doc)]
            if absent:
                missing[name] = absent
        else:
            assert dataclasses.is_dataclass(obj), name
            assert obj.__dataclass_params__.frozen and all(f.kw_only for f in dataclasses.fields(obj)), name
            assert "success" in {f.name for f in dataclasses.fields(obj)} or name == "StructureVariant", name
            assert (obj.__dict__.get("__doc__") or "").strip(), name
    assert not missing, missing


# --------------------------------------------------------------------------- experiment design
def test_seed_design_predictions_match_the_design_notes():
    t, f = chirp_design(10.0, 0.5, 5.0, 12.0, 500.0)
    t2, f2 = chirp_design(30.0, 0.5, 10.0, 12.0, 500.0)
    seed, strong = compare_designs(SEED_TERMS, SEED_TRUTH, [("seed", t, f), ("strong", t2, f2)], noise_sd=SEED_NOISE)
    assert seed.success and strong.success
    assert seed.label == "seed" and seed.worst_parameter == "m1"
    assert seed.rse("m1") == pytest.approx(0.24, rel=0.10)
    assert strong.rse("m1") == pytest.approx(0.04, rel=0.20)
    assert strong.rse("m1") < seed.rse("m1") / 4
    assert np.all(seed.rel_stderr < 0.01 + (np.array(seed.names) == "m1"))  # only m1 is weak
    assert seed.condition_number > 1 and seed.n_samples == 6000 and seed.x_max > 0.1


def test_design_prediction_agrees_with_the_fit_on_the_seed_record(seed_fit):
    t, f = chirp_design(10.0, 0.5, 5.0, 12.0, 500.0)
    pred = predict_uncertainty(SEED_TERMS, SEED_TRUTH, t, f, noise_sd={"x": SEED_NOISE})
    for name in pred.names:  # the fit's standard errors come from its own residual and estimate
        assert pred.stderr[pred.names.index(name)] == pytest.approx(seed_fit.estimate(name).stderr, rel=0.1), name


def test_suggest_design_picks_an_informative_chirp():
    sg = suggest_design(SEED_TERMS, SEED_TRUTH, noise_sd=SEED_NOISE, duration_s=12.0, fs_hz=500.0,
                        amplitudes=(10.0, 20.0, 30.0), bands=((0.5, 5.0), (0.5, 10.0), (1.0, 15.0)))
    assert sg.success and sg.best is not None and len(sg.table) == 9 and sg.usable.all()
    assert sg.best.rse("m1") < 0.10
    assert sg.best.max_rel_stderr == min(d.max_rel_stderr for d in sg.table)
    assert sg.best_settings is not None and sg.best_settings[0] >= 20.0


def test_diverging_design_is_a_result_and_is_skipped():
    softening = {"m0": 1.5, "c1": 0.8, "k1": 1500.0, "k3": -2.0e5}
    t, f = chirp_design(100.0, 1.0, 8.0, 5.0, 400.0)
    pred = predict_uncertainty("m0,c1,k1,k3", softening, t, f, noise_sd=2e-5)
    assert not pred.success and "diverge" in pred.message
    sg = suggest_design("m0,c1,k1,k3", softening, noise_sd=2e-5, duration_s=5.0, fs_hz=400.0,
                        amplitudes=(4.0, 100.0), bands=((1.0, 8.0),))
    assert sg.success and list(sg.usable) == [True, False] and sg.best_index == 0


def test_design_input_errors():
    t, f = chirp_design(10.0, 0.5, 5.0, 12.0, 500.0)
    with pytest.raises(ModelSpecError):
        predict_uncertainty(SEED_TERMS, {"m0": 2.0}, t, f, noise_sd=SEED_NOISE)
    with pytest.raises(ModelSpecError):
        predict_uncertainty(SEED_TERMS, SEED_TRUTH, t, f, noise_sd={"v": 1e-3})
    with pytest.raises(ModelSpecError):
        chirp_design(10.0, 0.5, 300.0, 12.0, 500.0)


def test_monte_carlo_scatter_matches_the_prediction():
    t, f = chirp_design(10.0, 0.5, 5.0, 12.0, 500.0)
    mc = monte_carlo_check(SEED_TERMS, SEED_TRUTH, t, f, noise_sd=SEED_NOISE, n_runs=8, rng=0)
    assert mc.success and mc.n_ok == 8 and mc.estimates.shape == (8, 6)
    assert np.all((mc.ratio > 0.5) & (mc.ratio < 2.0)), dict(zip(mc.names, mc.ratio, strict=True))
    assert np.all(np.abs(mc.bias) < 3 * mc.predicted_std)
    again = monte_carlo_check(SEED_TERMS, SEED_TRUTH, t, f, noise_sd=SEED_NOISE, n_runs=2,
                              rng=np.random.default_rng(0))
    np.testing.assert_array_equal(again.estimates, mc.estimates[:2])  # the noise comes from `rng` only


# --------------------------------------------------------------------------- studies of a fit
def test_sensitivity_study_names_m1_as_the_weakest(seed_fit, seed_record):
    st = sensitivity_study(seed_fit, seed_record)
    assert st.success, st.message
    assert st.weakest_parameter == "m1"
    assert st.reason.startswith("m1:") and ("sensitivity" in st.reason or "correlation" in st.reason)
    assert st.weak_directions and all("m1" in d or "m0" in d for d in st.weak_directions)
    # one noise group: the Fisher information reproduces the fit's covariance
    for name in st.names:
        assert st.stderr[st.names.index(name)] == pytest.approx(seed_fit.estimate(name).stderr, rel=1e-3)
    assert st.condition_number == pytest.approx(seed_fit.uncertainty.condition_number, rel=1e-3)
    # energy tables: windows add up to θ²·F_jj, bands hold nearly all of it
    info = st.values**2 * np.diag(st.fisher)[: len(st.names)]
    np.testing.assert_allclose(st.window_energy.sum(axis=1), info, rtol=1e-10)
    assert np.all(st.band_energy.sum(axis=1) > 0.99 * info)
    assert np.all(st.peak_frequency_hz < 6.0)  # the seed chirp ends at 5 Hz
    assert st.information_share[st.names.index("m1")] == st.information_share.min()
    assert st.eigenvalues[0] >= st.eigenvalues[-1] > 0
    np.testing.assert_allclose(np.diag(st.scaled_fisher), 1.0)


def test_sensitivity_study_rejects_an_equation_error_fit(seed_record):
    ee = equation_error(seed_record, TermModel(SEED_TERMS))
    with pytest.raises(ModelSpecError):
        sensitivity_study(ee, seed_record)


def test_profile_interval_of_k1_agrees_with_wald(seed_fit, seed_record):
    pr = profile_likelihood(seed_fit, seed_record, "k1")
    assert pr.success, pr.message
    assert pr.point_success.all() and pr.grid.size == 15
    assert pr.threshold == pytest.approx(3.841, abs=1e-3)
    assert pr.delta_chi2.min() == 0.0 and pr.delta_chi2[0] > pr.threshold and pr.delta_chi2[-1] > pr.threshold
    assert pr.interval[0] < pr.estimate < pr.interval[1]
    assert pr.agrees and all(0.8 <= r <= 1.2 for r in pr.halfwidth_ratio)
    assert set(pr.others) == {"m0", "m1", "c1", "c2", "k3"}
    with pytest.raises(ModelSpecError):
        profile_likelihood(seed_fit, seed_record, "k2")


def test_multistart_reaches_one_optimum_on_a_linear_system():
    rec = make_example("seed", overrides={"terms": {"m0": 2.0, "c1": 0.5, "k1": 800.0}, "seed": 5})
    ms = multistart(rec, "m0,c1,k1", None, FitOptions(), n_starts=6, rng=3)
    assert ms.success, ms.message
    assert ms.n_at_best == 6 and ms.at_best.all()
    assert np.all(ms.spread < 1e-6)
    assert ms.starts.shape == (6, 3) and np.ptp(ms.starts[:, 2]) > 100.0  # the starts really differ
    assert ms.best_fit is not None and ms.best_fit.estimate("k1").value == pytest.approx(800.0, rel=0.01)


def test_structure_check_keeps_k3_and_rejects_f0(seed_record):
    val = make_example("seed", overrides={"amplitude_n": 7.0, "seed": 3})
    sc = structure_check(seed_record, SEED_TERMS, None, add=("f0",), validation=val)
    assert sc.success, sc.message
    assert {v.label for v in sc.variants} == {"without m1", "without c1", "without c2", "without k1", "without k3",
                                              "with f0"}
    keep_k3 = [r for r in sc.recommendations if r.startswith("keep k3")]
    assert keep_k3 and "raises BIC" in keep_k3[0]
    assert sc.variant("without k3").delta_bic > 1000
    f0 = sc.variant("with f0")
    assert f0.success and f0.delta_bic > 0 and f0.n_params == sc.base.n_params + 1
    assert any(r.startswith("do not add f0") for r in sc.recommendations)
    assert sc.base.validation_rmse < sc.variant("without k3").validation_rmse


def test_regularisation_path_limits(seed_record):
    model = TermModel(SEED_TERMS)
    prior = {"m1": 0.05, "k3": 15000.0}
    lams = [0.0, *np.logspace(-8.0, 8.0, 17)]
    rp = regularisation_path(seed_record, model, None, None, prior, lams)
    assert rp.success, rp.message
    plain = equation_error(seed_record, model)
    np.testing.assert_allclose(rp.estimates[0], plain.parameters.values, rtol=1e-8)  # λ → 0: unregularised
    for name, value in prior.items():  # λ → ∞: the prior
        assert rp.estimates[-1, rp.names.index(name)] == pytest.approx(value, rel=1e-6)
    # Tikhonov: the residual grows and the deviation from the prior shrinks with λ
    assert np.all(np.diff(rp.residual_norm) >= -1e-9 * rp.residual_norm[:-1])
    assert np.all(np.diff(rp.deviation_norm) <= 1e-9 * rp.deviation_norm[:-1])
    # the corner: where the prior starts to cost fit (the prior here is off, so a small λ)
    assert 0 < rp.corner_index < len(lams) - 1 and rp.suggested_lambda == rp.lambdas[rp.corner_index]
    assert rp.residual_norm[rp.corner_index] < 1.1 * rp.residual_norm[0]
    assert rp.stderr.shape == rp.estimates.shape and rp.oe_estimates is None
    with pytest.raises(ModelSpecError):
        regularisation_path(seed_record, model, None, None, {"k9": 1.0}, lams)


def test_regularisation_path_with_output_error(seed_record):
    rp = regularisation_path(seed_record, SEED_TERMS, None, None, {"m1": 0.05}, [0.0, 1e-2, 1e8],
                             with_output_error=True)
    assert rp.oe_estimates is not None and rp.oe_deviation_norm is not None
    assert rp.oe_estimates[-1, rp.names.index("m1")] == pytest.approx(0.05, rel=1e-4)
    assert rp.oe_estimates[0, rp.names.index("m1")] == pytest.approx(0.126, rel=0.05)  # the plain output-error fit


# --------------------------------------------------------------------------- long studies: progress, speed, estimates
def _recorder():
    calls: list[tuple[str, float, str]] = []
    return calls, lambda stage, fraction, message: calls.append((stage, fraction, message))


def test_structure_check_reports_each_refit_and_reuses_the_given_fit(seed_record, seed_fit):
    calls, progress = _recorder()
    sc = structure_check(seed_record, SEED_TERMS, seed_fit.options, add=("f0",), base_fit=seed_fit,
                         progress=progress)
    assert sc.success and sc.base.start == "given fit" and sc.base.cost == seed_fit.cost
    labels = [v.label for v in sc.variants]
    assert labels == [label for label, *_ in analysis.structure_variants(SEED_TERMS, ("f0",))]
    n = len(labels) + 1
    for i, label in enumerate(labels, start=2):
        assert any(m.startswith(f"refit {label} ({i} of {n})") for _, _, m in calls), label
    assert any(re.search(r"\(\d of \d\): evaluation \d+ of at most \d+, cost ", m) for _, _, m in calls)  # its own
    fractions = [f for _, f, _ in calls]
    assert all(0.0 <= f <= 1.0 for f in fractions) and fractions == sorted(fractions) and fractions[-1] == 1.0
    assert sc.variant("without k3").delta_bic > 1000 and sc.variant("with f0").delta_bic > 0
    assert sc.seconds > 0 and all(v.seconds > 0 for v in sc.variants)
    # a fit that does not match (other options) is not reused: the base is identified again
    other = structure_check(seed_record, "m0,c1,k1", FitOptions(), add=(), base_fit=seed_fit)
    assert other.base.start == "identified"


def test_an_added_coefficient_that_stays_at_its_bound_is_decided_without_fitting():
    # a linear record: friction would only make the fit worse, so fc stays at its bound 0
    rec = make_example("seed", overrides={"terms": {"m0": 2.0, "c1": 0.5, "k1": 800.0}, "seed": 5})
    fit = identify(rec, "m0,c1,k1")
    sc = structure_check(rec, fit.model, fit.options, add=("fc", "k3"), base_fit=fit)
    fc, k3 = sc.variant("with fc"), sc.variant("with k3")
    if "stays at its bound" in fc.start:
        assert fc.cost == fit.cost and fc.n_params == sc.base.n_params + 1
        assert fc.delta_bic == pytest.approx(np.log(fc.n))
    else:  # the gradient pointed into the feasible side: it was fitted, and may only improve on the base
        assert fc.cost <= fit.cost * (1 + 1e-9)
    assert "bound" not in k3.start  # k3 is signed: no bound to stay at, it is fitted
    assert k3.success and k3.cost <= fit.cost * (1 + 1e-9)
    assert [r.split(":")[0] for r in sc.recommendations] == ["keep c1", "keep k1", "do not add fc", "do not add k3"]


def test_multistart_and_profile_report_progress():
    rec = make_example("seed", overrides={"terms": {"m0": 2.0, "c1": 0.5, "k1": 800.0}, "seed": 5})
    calls, progress = _recorder()
    ms = multistart(rec, "m0,c1,k1", None, FitOptions(), n_starts=2, rng=3, progress=progress)
    assert ms.success
    assert {m.split(":")[0] for _, _, m in calls} >= {"start (1 of 2)", "start (2 of 2)"}
    assert all(s == "multi-start" for s, _, _ in calls) and calls[-1][1] == 1.0
    fit = identify(rec, "m0,c1,k1")
    calls, progress = _recorder()
    prof = profile_likelihood(fit, rec, "k1", n_points=4, progress=progress)
    assert prof.success
    assert sum(m.endswith(f"of {prof.grid.size})") for _, _, m in calls) == prof.grid.size


def test_study_time_estimates_scale_with_the_work_and_read_well(seed_fit):
    one = analysis.study_seconds(seed_fit, "multistart", 1)
    assert analysis.study_seconds(seed_fit, "multistart", 10) == pytest.approx(10 * one)
    assert one == pytest.approx(1.2 * analysis.fit_seconds(seed_fit) + analysis.estimates.REFIT_OVERHEAD_S)
    assert 0 < analysis.evaluation_seconds(seed_fit) <= analysis.fit_seconds(seed_fit)
    assert analysis.study_seconds(seed_fit, "structure", 8) > analysis.study_seconds(seed_fit, "structure", 2)
    with pytest.raises(ModelSpecError, match="unknown `study`"):
        analysis.study_seconds(seed_fit, "bootstrap")
    assert [analysis.duration_text(s) for s in (0.5, 7.4, 41.0, 185.0, 5400.0, float("nan"))] == [
        "under 2 s", "about 7 s", "about 40 s", "about 3 min", "about 1.5 h", "an unknown time"]
    assert analysis.design_seconds(0.1, "search", 18) == pytest.approx(2 * analysis.design_seconds(0.1, "search", 9))
    assert analysis.design_seconds(0.1, "monte carlo", 40) > analysis.design_seconds(0.1, "monte carlo", 4)


def test_percentages_keep_sensible_digits():
    assert [analysis.format_percent(x) for x in (0.000123, 0.637144, 12.3, float("inf"))] == [
        "0.0123 %", "63.7 %", "1230 %", "not determined"]


def test_design_defaults_follow_a_volt_record_and_its_fit():
    rec = make_example("seed", overrides={"terms": {"m0": 2.0, "c1": 0.5, "k1": 800.0}, "seed": 5})
    volts = dataclasses.replace(rec, units={**rec.units, "f": "V", "x": "V", "v": "V/s", "a": "V/s^2"})
    fit = identify(volts, "m0,c1,k1")
    d = analysis.design_defaults(volts, fit)
    assert d.from_record and (d.force_unit, d.x_unit, d.fs_hz) == ("V", "V", volts.fs)
    assert d.amplitude == pytest.approx(float(np.max(np.abs(volts.f))), rel=0.05)
    res = fit.records[0].predicted["x"] - fit.records[0].measured["x"]
    assert d.noise_sd == pytest.approx(float(np.sqrt(np.mean(res**2))), rel=0.05)
    assert 0 < d.f_start_hz < d.f_end_hz <= volts.fs / 5 and d.duration_s <= analysis.design.MAX_DEFAULT_DURATION_S
    assert "V" in d.message and "residual" in d.message
    seed = analysis.design_defaults()
    assert not seed.from_record and (seed.force_unit, seed.x_unit, seed.fs_hz) == ("N", "m", 500.0)
    sg = suggest_design("m0,c1,k1", fit.values, noise_sd=d.noise_sd, duration_s=4.0, fs_hz=volts.fs,
                        amplitudes=(d.amplitude,), bands=((d.f_start_hz, d.f_end_hz),), force_unit="V")
    assert sg.success and sg.table[0].label.startswith(f"chirp {d.amplitude:.3g} V ") and " N " not in sg.message
