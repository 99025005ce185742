"""Plotly figure builders (nlid_core.figures): every builder returns a labelled figure; decimation keeps peaks."""

from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go
import pytest

from nlid_core import figures as F
from nlid_core import nonlinearity as nl
from nlid_core.errors import DataValidationError, ModelSpecError
from nlid_core.estimate import FitOptions, equation_error, identify
from nlid_core.models import TermModel
from nlid_core.record import from_arrays
from nlid_core.signals import derive_missing
from nlid_core.validation import ValidationResult, validate

UNIT = re.compile(r"\[[^\]]+\]")


@pytest.fixture(scope="module")
def seed(seed_record):
    return seed_record


@pytest.fixture(scope="module")
def oe_fit(seed):
    fit = identify(seed, "m0,c1,k1,k3", options=FitOptions(method="two-stage", outputs=("x",)))
    assert fit.method != "equation-error" and "x" in fit.records[0].predicted
    return fit


@pytest.fixture(scope="module")
def validation(seed, oe_fit):
    val = validate(oe_fit, seed, init="data")
    assert isinstance(val, ValidationResult)
    return val


def _axis_title(fig: go.Figure, key: str) -> str:
    axis = fig.layout[key]
    return (axis.title.text or "") if axis is not None else ""


def _used_axes(fig: go.Figure) -> tuple[set[str], set[str]]:
    xs, ys = set(), set()
    for tr in fig.data:
        xa = getattr(tr, "xaxis", None) or "x"
        ya = getattr(tr, "yaxis", None) or "y"
        xs.add("xaxis" + xa[1:])
        ys.add("yaxis" + ya[1:])
    return xs, ys


def check_figure(fig: go.Figure, *, categorical: bool = False) -> None:
    """At least one trace; every y axis in use and (at least) one x axis titled with a unit in brackets."""
    assert isinstance(fig, go.Figure)
    assert len(fig.data) >= 1
    assert fig.layout.template.layout.paper_bgcolor is not None  # a template is applied
    xs, ys = _used_axes(fig)
    if categorical:
        assert all(_axis_title(fig, k) for k in xs | ys)
        bars = [tr.colorbar.title.text for tr in fig.data if hasattr(tr, "colorbar")]
        assert any(UNIT.search(b or "") for b in bars)
        return
    for key in ys:
        title = _axis_title(fig, key)
        assert title and UNIT.search(title), f"{key} title {title!r}"
    x_titles = [_axis_title(fig, k) for k in fig.layout if k.startswith("xaxis")]
    assert any(t and UNIT.search(t) for t in x_titles), x_titles


# --------------------------------------------------------------------------- decimation


def test_decimation_keeps_extremes_and_bounds_the_size(rng):
    n = 1_000_000
    t = np.arange(n) / 1e4
    y = np.sin(2 * np.pi * 3 * t) + 0.1 * rng.standard_normal(n)
    y[123_457] = 7.5  # a lone spike
    y[876_543] = -6.25
    td, yd = F.decimate_for_plot(t, y, max_points=4000)
    assert td.size == yd.size <= 4000
    assert yd.max() == y.max() and yd.min() == y.min()
    assert 123_457 / 1e4 in td and 876_543 / 1e4 in td
    assert np.all(np.diff(td) > 0)  # time order kept
    td2, yd2 = F.decimate_for_plot(t, y, max_points=101)
    assert td2.size <= 101 and yd2.max() == y.max()


def test_decimation_returns_short_signals_unchanged():
    t = np.arange(10.0)
    y = t**2
    td, yd = F.decimate_for_plot(t, y, max_points=4000)
    assert np.array_equal(td, t) and np.array_equal(yd, y)
    with pytest.raises(ModelSpecError, match="max_points"):
        F.decimate_for_plot(t, y, max_points=2)
    with pytest.raises(DataValidationError, match="`t`"):
        F.decimate_for_plot(t[:5], y)


# --------------------------------------------------------------------------- records and evidence


def test_fig_record_marks_derived_channels(seed):
    rec = derive_missing(from_arrays(seed.t, seed.f, seed.x, name="x only"))
    fig = F.fig_record(rec, max_points=1000)
    check_figure(fig)
    assert len(fig.data) == 4
    names = {tr.name: tr for tr in fig.data}
    assert names["v (derived)"].line.dash == "dash" and names["x"].line.dash == "solid"
    assert _axis_title(fig, "yaxis") == "force [N]"
    assert all(tr.x.size <= 1000 for tr in fig.data)
    with pytest.raises(DataValidationError, match="channels"):
        F.fig_record(from_arrays(seed.t, seed.f, seed.x), channels=("a",))


def test_fig_derivative_check(seed):
    fig = F.fig_derivative_check(seed.t, seed.v, np.gradient(seed.x, seed.t), name="velocity", unit="m/s")
    check_figure(fig)
    assert _axis_title(fig, "yaxis") == "velocity [m/s]"
    with pytest.raises(DataValidationError):
        F.fig_derivative_check(seed.t, seed.v[:-1], seed.v, name="velocity", unit="m/s")


@pytest.mark.parametrize(("against", "color_by"), [("x", "time"), ("v", "amplitude")])
def test_fig_hysteresis(seed, against, color_by):
    fig = F.fig_hysteresis(seed, against=against, color_by=color_by, max_points=2000)
    check_figure(fig)
    bar = fig.data[0].marker.colorbar.title.text
    assert (bar == "time [s]") if color_by == "time" else UNIT.search(bar)
    assert len(fig.data[0].x) <= 2000


def test_fig_hysteresis_validates(seed):
    with pytest.raises(ModelSpecError, match="against"):
        F.fig_hysteresis(seed, against="a")
    with pytest.raises(ModelSpecError, match="color_by"):
        F.fig_hysteresis(seed, color_by="speed")
    with pytest.raises(DataValidationError, match="against"):
        F.fig_hysteresis(from_arrays(seed.t, seed.f, seed.x), against="v")


def test_fig_restoring_force(seed):
    rf = nl.restoring_force(seed)
    grid = np.linspace(-0.2, 0.2, 41)
    fig = F.fig_restoring_force(rf, model_curve=(grid, 800 * grid + 2e4 * grid**3))
    check_figure(fig)
    assert len(fig.data) == 2
    check_figure(F.fig_restoring_force(rf, against="v"))


def test_fig_spectrum_and_spectrogram(seed):
    spec = nl.spectrum(seed, channels=("f", "x", "a"))
    fig = F.fig_spectrum(spec, harmonics_of=2.0)
    check_figure(fig)
    assert len(fig.data) == 3
    assert max(fig.data[0].x) <= 8 * spec.band_hz[1] + 1
    assert len(F.fig_spectrum(spec, max_freq=np.inf).data[0].x) == spec.freq_hz.size
    times, freqs, power = nl.spectrogram(seed)
    fig = F.fig_spectrogram(times, freqs, power, max_freq=20.0, unit="m")
    check_figure(fig)
    assert max(fig.data[0].y) <= 20.0
    with pytest.raises(DataValidationError, match="power_db"):
        F.fig_spectrogram(times, freqs, power.T)


def test_fig_harmonics(seed):
    h = nl.harmonic_distortion(seed)
    for against in ("time", "frequency"):
        fig = F.fig_harmonics(h, against=against)
        check_figure(fig)
        assert any(tr.name == "3×" for tr in fig.data)


def test_fig_frf_overlay(seed):
    low = seed.replace(f=0.5 * seed.f, x=0.5 * seed.x, v=0.5 * seed.v, a=0.5 * seed.a, name="half")
    fig = F.fig_frf_overlay([("10 N", nl.frf(seed)), ("5 N", nl.frf(low))])
    check_figure(fig)
    assert {tr.name for tr in fig.data if tr.showlegend is not False} == {"10 N", "5 N"}
    assert _axis_title(fig, "yaxis") == "|H| [dB re m/N]"
    with pytest.raises(DataValidationError, match="frfs"):
        F.fig_frf_overlay([])


# --------------------------------------------------------------------------- fit results


def test_fig_correlation(oe_fit):
    fig = F.fig_correlation(oe_fit)
    check_figure(fig, categorical=True)
    z = np.asarray(fig.data[0].z)
    assert z.shape == (4, 4) and np.allclose(np.diag(z), 1.0)
    assert list(fig.data[0].x) == ["m0", "c1", "k1", "k3"]


def test_fig_fit_output_error_record(oe_fit, seed):
    fig = F.fig_fit(oe_fit.records[0], units=seed.units, max_points=2000)
    check_figure(fig)
    assert _axis_title(fig, "yaxis") == "displacement [m]"
    assert [tr.name for tr in fig.data] == ["measured", "simulated", "residual"]


def test_fig_fit_validation(validation):
    fig = F.fig_fit(validation)
    check_figure(fig)
    assert "residual" in _axis_title(fig, "yaxis2")


def test_fig_fit_equation_error_shows_the_force(seed):
    ee = equation_error(seed, TermModel("m0,c1,k1,k3"))
    fig = F.fig_fit(ee.records[0])
    check_figure(fig)
    assert _axis_title(fig, "yaxis") == "force [N]"
    with pytest.raises(DataValidationError, match="rec_fit_or_validation"):
        F.fig_fit(seed)  # type: ignore[arg-type]


def test_fig_fit_spectrum(oe_fit, validation, seed):
    fig = F.fig_fit_spectrum(oe_fit.records[0], units=seed.units)
    check_figure(fig)
    assert [tr.name for tr in fig.data] == ["measured", "simulated", "residual"]
    assert max(fig.data[0].x) <= 8 * 5.2
    fig = F.fig_fit_spectrum(validation, channel="v", max_freq=100.0)
    check_figure(fig)
    assert _axis_title(fig, "yaxis") == "PSD of v [dB re m/s^2/Hz]"
    ee = equation_error(seed, TermModel("m0,c1,k1,k3"))
    assert _axis_title(F.fig_fit_spectrum(ee.records[0]), "yaxis") == "PSD of f [dB re N^2/Hz]"
    with pytest.raises(ModelSpecError, match="max_freq"):
        F.fig_fit_spectrum(validation, max_freq=-1)


def test_residual_figures(oe_fit):
    rf = oe_fit.records[0]
    resid = rf.predicted["x"] - rf.measured["x"]
    check_figure(F.fig_residual_spectrum(rf.t, resid, unit="m"))
    fig = F.fig_residual_acf(resid, max_lag=30)
    check_figure(fig)
    band = [tr for tr in fig.data if tr.name == "±1.96/√n"]
    assert band and band[0].y[0] == pytest.approx(1.96 / np.sqrt(resid.size))
    assert _axis_title(F.fig_residual_acf(resid, dt=0.002), "xaxis") == "lag [s]"


def test_fig_to_html(seed):
    html = F.fig_to_html(F.fig_record(seed, max_points=500))
    assert html.lstrip().startswith("<div") and "Plotly.newPlot" in html
    assert "<html" not in html
    assert len(F.fig_to_html(F.fig_record(seed, max_points=500), include_plotlyjs=True)) > len(html)
    with pytest.raises(ModelSpecError, match="fig"):
        F.fig_to_html("not a figure")  # type: ignore[arg-type]


def test_surface_and_equivalent_linear_figures():
    import numpy as np

    from nlid_core import figures
    from nlid_core.examples import SEED_TRUTH, ExampleSpec, generate, make_example
    from nlid_core.models import TermModel
    from nlid_core.nonlinearity import equivalent_linear, restoring_force, restoring_surface

    rf = restoring_force(make_example("seed"))
    surf = restoring_surface(rf)
    X, V = np.meshgrid(surf.x_centers, surf.v_centers)
    model = TermModel("m0,c1,c2,k1,k3")
    theta = np.array([2.0, 0.5, 0.2, 800.0, 20000.0])
    model_force = model.restoring_force(theta, X.ravel(), V.ravel()).reshape(X.shape)
    fig = figures.fig_restoring_surface(surf, model_force)
    assert len(fig.data) == 2 and "[m]" in fig.layout.xaxis.title.text
    levels = equivalent_linear([generate(ExampleSpec(terms=SEED_TRUTH, amplitude_n=a, measured=("x",)), name=str(a))
                                for a in (5.0, 20.0)])
    fig = figures.fig_equivalent_linear(levels)
    assert len(fig.data) == 2 and "[Hz]" in fig.layout.yaxis.title.text


def test_record_names_and_units_cannot_inject_markup_into_figures():
    """plotly renders links and line breaks in titles, labels and hover text: user text is escaped."""
    from nlid_core.record import from_arrays

    t = np.arange(400) / 200.0
    hostile = '<a href="http://example.invalid/">click</a><br>'
    rec = from_arrays(t, np.sin(7 * t), 1e-3 * np.cos(7 * t), name=hostile, units={"x": "<b>mm</b>"})
    fig = F.fig_record(rec)
    texts = [fig.layout.title.text] + [ax.title.text for ax in (fig.layout.yaxis, fig.layout.yaxis2)]
    assert all("<a" not in t and "<b>" not in t and "<br>" not in t for t in texts), texts
    assert "&lt;a href" in fig.layout.title.text


# --------------------------------------------------------------------------- units of a record in volts
@pytest.fixture(scope="module")
def volt_fit(seed):
    """The seed record relabelled as a record in volts (force and displacement channels both in V)."""
    rec = from_arrays(seed.t, seed.f, seed.x, name="volts", units={"f": "V", "x": "V"})
    fit = identify(rec, "m0,c1,k1,k3", options=FitOptions(method="two-stage", outputs=("x",)))
    assert fit.success
    return rec, fit


def test_fit_units_come_from_the_fit_not_from_si(volt_fit):
    rec, fit = volt_fit
    units = F.fits.fit_units(fit, rec.name)
    assert units == {"t": "s", "x": "V", "v": "V/s", "a": "V/s^2"}
    fig = F.fig_fit(fit.records[0], channel="x", units=units)
    titles = [_axis_title(fig, k) for k in ("yaxis", "yaxis2", "xaxis2")]
    assert titles == ["displacement [V]", "residual (simulated − measured) [V]", "time [s]"]
    assert not any("[m]" in t or "[N]" in t for t in titles)
    assert all(" V at " in tr.hovertemplate and tr.hovertemplate.endswith(" s") for tr in fig.data)
    spectrum = F.fig_fit_spectrum(fit.records[0], channel="x", units=units)
    assert "V^2/Hz" in _axis_title(spectrum, "yaxis")


def test_fit_units_of_an_equation_error_fit_name_the_force_unit(volt_fit):
    rec, _ = volt_fit
    ee = equation_error(derive_missing(rec), TermModel(("m0", "c1", "k1")))
    units = F.fits.fit_units(ee, rec.name)
    assert units["f"] == "V" and "x" not in units
    fig = F.fig_fit(ee.records[0], channel="x", units=units)
    assert _axis_title(fig, "yaxis") == "force [V]"
    with pytest.raises(DataValidationError, match="`fit` must be a FitResult"):
        F.fits.fit_units(ee.records[0])  # type: ignore[arg-type]


def test_validation_of_a_volt_record_carries_volt_units_for_simulated_channels(volt_fit):
    rec, fit = volt_fit
    val = validate(fit, rec, init="data")
    assert dict(val.units) == {"f": "V", "x": "V", "v": "V/s", "a": "V/s^2"}
    fig = F.fig_fit(val, channel="x")
    assert _axis_title(fig, "yaxis") == "displacement [V]"


def test_design_comparison_draws_undetermined_parameters_at_the_cap():
    from types import SimpleNamespace

    from nlid_core.figures.analysis import fig_design_comparison

    pred = SimpleNamespace(label="chirp", names=("m", "k"), rel_stderr=(0.02, 1.4e14), success=True)
    bars = fig_design_comparison([pred]).data[0]
    assert list(bars.y) == pytest.approx([2.0, 1e4])
    assert list(bars.text) == ["", ">10000"]


def test_closed_loop_figure_labels_the_record_units_and_shows_the_position_error():
    t = np.arange(200) / 1000.0
    ref = 0.01 * np.sin(2 * np.pi * t)
    fig = F.fig_closed_loop(t, ref, {"x": ref, "f": np.cos(t)}, {"x": ref + 1e-5, "f": np.cos(t) + 0.1},
                                  units={"t": "s", "x": "mm", "f": "kN"}, name="<axis>")
    names = [tr.name for tr in fig.data]
    assert names == ["reference", "measured", "simulated in the loop", "position error", "measured force",
                     "applied force, simulated"]
    assert np.allclose(fig.data[3].y, 1e-5)
    titles = [fig.layout[a].title.text for a in ("yaxis", "yaxis2", "yaxis3")]
    assert titles == ["displacement [mm]", "simulated − measured [mm]", "force [kN]"]
    assert "&lt;axis&gt;" in fig.layout.title.text
