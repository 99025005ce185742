"""Hostile numbers: units that scale the data by 1e±200, sampling intervals of 1e-300 s, a stray sample that
would make a resampled grid of 1e9 points. Every case gives a correct answer or a specific error, never an
internal one (LinAlgError, ZeroDivisionError, MemoryError) and never a numpy warning."""

from __future__ import annotations

import time
import tracemalloc
import warnings

import numpy as np
import pytest

from nlid_core.errors import DataValidationError
from nlid_core.estimate import FitOptions, coefficient_scales, identify
from nlid_core.examples import make_example
from nlid_core.identifiability import uncertainty_from_jacobian
from nlid_core.models import TERMS
from nlid_core.record import MAX_RESAMPLED, from_arrays, resample_uniform
from nlid_core.signals import derive_missing, gradient_derivative, savgol_derivative, spectral_derivative

SEED_TERMS = "m0,m1,c1,c2,k1,k3"
EE = FitOptions(method="equation-error")


@pytest.fixture(scope="module")
def seed():
    return make_example("seed")


@pytest.fixture(scope="module")
def seed_ee(seed):
    return identify(seed, SEED_TERMS, options=EE)


def _scaled(rec, force=1.0, disp=1.0):
    return from_arrays(rec.t, rec.f * force, rec.x * disp, rec.v * disp, rec.a * disp)


def _expected(fit, name, force, disp):
    return fit.values[name] * force / disp ** float(-TERMS[name].params[0].unit.x)


# --------------------------------------------------------------------------- finding 1: scaled force / displacement
def test_force_in_units_of_1e_minus_12_scales_every_parameter(seed):
    """A units factor of 1e-12 on the force scales every coefficient (and its standard error) by 1e-12."""
    base = identify(seed, SEED_TERMS)
    fit = identify(_scaled(seed, force=1e-12), SEED_TERMS)
    assert fit.success
    for name in base.values:
        assert fit.values[name] == pytest.approx(1e-12 * base.values[name], rel=1e-6), name
        assert fit.estimate(name).stderr == pytest.approx(1e-12 * base.estimate(name).stderr, rel=1e-6), name
        assert fit.estimate(name).flags == base.estimate(name).flags, name


@pytest.mark.parametrize("force, disp", [(1e-200, 1.0), (1e-30, 1.0), (1e8, 1.0), (1.0, 1e-30), (1.0, 1e-80),
                                         (1e-100, 1e-60)])
def test_equation_error_is_exact_under_any_representable_scaling(seed, seed_ee, force, disp):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow / invalid value on the way
        fit = identify(_scaled(seed, force, disp), SEED_TERMS, options=EE)
    for name in seed_ee.values:
        want = _expected(seed_ee, name, force, disp)
        assert fit.values[name] == pytest.approx(want, rel=1e-9, abs=0.0), name
    assert fit.metrics[0].nrmse == pytest.approx(seed_ee.metrics[0].nrmse, rel=1e-9)


def test_force_of_1e_minus_200_is_identified_by_output_error(seed):
    """The fuzzer's case: ``LinAlgError: SVD did not converge`` before."""
    fit = identify(_scaled(seed, force=1e-200), "m0,c1,k1,k3")
    base = identify(seed, "m0,c1,k1,k3")
    assert fit.success
    for name in base.values:
        assert fit.values[name] == pytest.approx(1e-200 * base.values[name], rel=1e-6), name
        assert np.isfinite(fit.estimate(name).stderr) and fit.estimate(name).stderr > 0
    assert fit.metrics[0].fit_percent == pytest.approx(base.metrics[0].fit_percent, rel=1e-6)


def test_coefficients_beyond_floating_point_give_a_specific_error(seed):
    rec = _scaled(seed, disp=1e-200)  # k3 would be ~1e604 N/m^3
    for method in ("equation-error", "two-stage"):
        with pytest.raises(DataValidationError, match=r"coefficients \(.*k3 ~1e\+60\d N/m\^3\).*another unit"):
            identify(rec, SEED_TERMS, options=FitOptions(method=method))
    # the linear model's coefficients still fit into floating point: equation error gets them right
    fit = identify(rec, "m0,c1,k1", options=EE)
    base = identify(seed, "m0,c1,k1", options=EE)
    assert fit.values["k1"] == pytest.approx(base.values["k1"] * 1e200, rel=1e-9)


def test_data_without_information_give_specific_errors(seed):
    zero = np.zeros(seed.n)
    cases = {
        "force is zero": from_arrays(seed.t, zero, seed.x),
        "below the floating-point range": from_arrays(seed.t, seed.f * 1e-310, seed.x),
        "displacement is constant": from_arrays(seed.t, seed.f, np.full(seed.n, 0.25)),
        "displacement is zero": from_arrays(seed.t, seed.f, zero),
    }
    for words, rec in cases.items():
        for method in ("equation-error", "two-stage"):
            with pytest.raises(DataValidationError, match=words):
                identify(rec, "m0,c1,k1", options=FitOptions(method=method))


def test_coefficient_scales_follow_the_units(seed):
    one = coefficient_scales(identify(seed, "m0,k1", options=EE).model, seed)
    tiny = coefficient_scales(identify(seed, "m0,k1", options=EE).model, _scaled(seed, force=2.0**-600))
    assert tiny["k1"] == one["k1"] * 2.0**-600 and tiny["m0"] == one["m0"] * 2.0**-600


def test_uncertainty_is_invariant_to_column_scaling(rng):
    jac = rng.normal(size=(400, 3))
    res = rng.normal(size=400)
    ref = uncertainty_from_jacobian(jac, res, ["a", "b", "c"])
    scale = np.array([1e-200, 1.0, 1e200])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        unc = uncertainty_from_jacobian(jac * scale, res, ["a", "b", "c"])
    np.testing.assert_allclose(unc.stderr * scale, ref.stderr, rtol=1e-12)
    np.testing.assert_allclose(unc.correlation, ref.correlation, rtol=1e-12, atol=1e-15)
    assert unc.condition_number == pytest.approx(ref.condition_number, rel=1e-12)
    bad = jac.copy()
    bad[3, 1] = np.nan
    broken = uncertainty_from_jacobian(bad, res, ["a", "b", "c"])
    assert broken.rank == 0 and np.all(np.isinf(broken.stderr))


def test_derivatives_of_a_tiny_signal_are_scaled_derivatives(seed):
    rec = from_arrays(seed.t, seed.f, seed.x)
    ref = derive_missing(rec)
    tiny = derive_missing(from_arrays(rec.t, rec.f, rec.x * 1e-200))
    assert tiny.warnings == ref.warnings  # same windows chosen
    np.testing.assert_allclose(tiny.a, ref.a * 1e-200, rtol=1e-9, atol=1e-9 * 1e-200 * np.max(np.abs(ref.a)))


def test_derived_channel_too_large_names_the_units(seed):
    rec = from_arrays(seed.t, seed.f, seed.x)
    with pytest.raises(DataValidationError, match="acceleration `a` derived.*check the displacement and time units"):
        derive_missing(from_arrays(rec.t, rec.f, rec.x * 1e8))


# --------------------------------------------------------------------------- finding 2: sampling interval
def test_sampling_rate_of_1e300_is_rejected_by_the_record():
    n = 200
    with pytest.raises(DataValidationError, match=r"sampling interval of `t` is 1e-300 s.*shorter than 1e-09 s"):
        from_arrays(np.arange(n) / 1e300, np.sin(np.arange(n) / 7), np.cos(np.arange(n) / 9))
    with pytest.raises(DataValidationError, match="longer than 1e\\+06 s"):
        from_arrays(np.arange(n) * 2e6, np.sin(np.arange(n) / 7), np.cos(np.arange(n) / 9))


def test_sampling_interval_boundaries_are_accepted_and_identified(seed):
    rec = from_arrays(seed.t, seed.f, seed.x)
    ref = identify(rec, "m0,c1,k1,k3", options=EE)
    # the same record at 1 GHz (displacement in µm-scale units so the derived acceleration stays below the
    # 1e9 limit of any channel) and at one sample a day
    for dt, disp in ((1e-9, 1e-6), (1e5, 1.0)):
        st = dt / rec.dt
        fast = from_arrays(rec.t * st, rec.f, rec.x * disp)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fit = identify(fast, "m0,c1,k1,k3", options=EE)
        # time scaled by st and displacement by disp: m0 ~ st²/disp, c1 ~ st/disp, k1 ~ 1/disp, k3 ~ 1/disp³
        assert fit.values["k1"] == pytest.approx(ref.values["k1"] / disp, rel=1e-6)
        assert fit.values["k3"] == pytest.approx(ref.values["k3"] / disp**3, rel=1e-6)
        assert fit.values["m0"] == pytest.approx(ref.values["m0"] * st**2 / disp, rel=1e-6)
        assert fit.values["c1"] == pytest.approx(ref.values["c1"] * st / disp, rel=1e-5)


@pytest.mark.parametrize("fn", [savgol_derivative, spectral_derivative, gradient_derivative])
def test_differentiators_refuse_absurd_time_steps_without_dividing_by_zero(fn):
    y = np.sin(np.arange(300) / 9.0)
    for dt in (1e-300, 1e300):
        with pytest.raises(DataValidationError, match="`dt` must lie between"):
            fn(y, dt, order=2)


# --------------------------------------------------------------------------- finding 3: resampling a gap
def test_resampling_a_single_far_sample_is_refused_before_allocating():
    t = np.r_[np.arange(25) * 1e-6, 1000.0]
    f = np.sin(np.arange(26.0))
    x = np.cos(np.arange(26.0))
    tracemalloc.start()
    start = time.process_time()
    try:
        with pytest.raises(DataValidationError) as info:
            from_arrays(t, f, x, resample=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.process_time() - start < 2.0 and peak < 10_000_000
    msg = str(info.value)
    assert "one interval of 1000 s" in msg and "intervals of 1 µs" in msg and "1e+09 samples" in msg
    assert "\n" not in msg


def test_resampling_limits_and_a_modest_gap():
    t = np.r_[np.arange(40) * 0.01, 0.405 + np.arange(40) * 0.01]  # one interval of 15 ms among 10 ms ones
    rec = from_arrays(t, np.sin(t * 5), np.cos(t * 3), resample=True)
    assert rec.n == 80 and "resampled" in rec.warnings[-1]
    with pytest.raises(DataValidationError, match="choose a lower `fs`"):
        resample_uniform(rec, fs=1e6)
    with pytest.raises(DataValidationError, match="`fs` = 1e\\+300 Hz"):
        resample_uniform(rec, fs=1e300)
    assert MAX_RESAMPLED == 10_000_000


# --------------------------------------------------------------------------- finding 4: warnings are results
def test_validation_lists_its_numerical_warnings_in_the_report(seed, monkeypatch):
    from nlid_core import validation
    from nlid_core.report import format_report, result_to_dict

    fit = identify(seed, "m0,c1,k1,k3", options=EE)
    original = validation.simulate

    def noisy(*args, **kwargs):
        np.sqrt(np.array([-1.0, -2.0]))
        return original(*args, **kwargs)

    monkeypatch.setattr(validation, "simulate", noisy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        val = validation.validate(fit, seed, init="data")
    assert val.warnings == ("numpy: invalid value encountered in sqrt",)
    assert val.to_dict()["warnings"] == list(val.warnings)
    line = f"validation on {seed.name}: numpy: invalid value encountered in sqrt"
    assert line in result_to_dict(fit, [val])["warnings"]
    assert line in format_report(fit, [val])


def test_equivalent_linear_parameters_of_a_tiny_force(seed):
    from nlid_core.nonlinearity import equivalent_linear

    ref = equivalent_linear([seed])[0]
    tiny = equivalent_linear([_scaled(seed, force=1e-200)])[0]  # k1·m0 underflows: ZeroDivisionError before
    assert tiny.zeta == pytest.approx(ref.zeta, rel=1e-9) and tiny.f_n_hz == pytest.approx(ref.f_n_hz, rel=1e-9)


def test_simulation_needs_representable_sensitivities(seed):
    """Equation error copes with a displacement of 1e-151 m; simulating it would need sensitivities of 1e-302."""
    rec = _scaled(seed, disp=1e-150)
    fit = identify(rec, "m0,c1,k1", options=EE)
    assert fit.values["k1"] == pytest.approx(identify(seed, "m0,c1,k1", options=EE).values["k1"] * 1e150, rel=1e-9)
    with pytest.raises(DataValidationError, match=r"sensitivities of the response \(to m0 ~1e-30\d.*to simulate"):
        identify(rec, "m0,c1,k1")
