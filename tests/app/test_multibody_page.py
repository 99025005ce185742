"""AppTest of the Multibody & interval page: it renders at the paper's preset, a short simulation draws the
animation and the tip trajectory, bad inputs give specific error messages (no traceback) and keep earlier
results, and the form survives a page change."""

from __future__ import annotations

import math

import pytest
from streamlit.testing.v1 import AppTest

from app_support import state

from .test_pages import fresh, go


def page() -> AppTest:
    return go(fresh(), "multibody")


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_the_page_renders_with_the_papers_preset():
    at = page()
    clean(at)
    assert not at.error, [e.value for e in at.error]
    assert at.number_input(key=state.MB_HEIGHT).value == pytest.approx(0.4)
    assert at.number_input(key=state.MB_E_AB).value == pytest.approx(2e7)
    assert at.number_input(key=state.MB_THETA1).value == pytest.approx(math.pi / 4)
    assert at.number_input(key=state.MB_THETA2).value == pytest.approx(math.pi / 6)
    assert any("height is 0.4 m" in c.value for c in at.caption)
    assert any("Simulate" in i.value for i in at.info)  # says what to do


@pytest.fixture(scope="module")
def simulated() -> AppTest:
    at = page()
    at.number_input(key=state.MB_T_END).set_value(0.3).run()
    at.button(key=state.MB_SIMULATE).click().run()
    clean(at)
    return at


def test_a_short_simulation_draws_the_animation_and_the_trajectory(simulated):
    at = simulated
    assert not at.error, [e.value for e in at.error]
    flex, rigid = at.session_state[state.MULTIBODY]["sim"]["runs"]
    assert flex.model == "ancf" and rigid.model == "rigid" and flex.success and rigid.success
    assert flex.t[-1] == pytest.approx(0.3) and flex.nodes.shape == (7, 7, 2)
    # released from rest at the preset: the flexible and rigid tips start together and part only slightly
    assert abs(flex.x_b[0] - rigid.x_b[0]) < 5e-3 and abs(flex.y_b[-1] - rigid.y_b[-1]) < 0.05
    charts = at.get("plotly_chart")
    assert len(charts) == 2  # the animation and the tip trajectory
    said = [s.value for s in at.success]
    assert len(said) == 2 and said[0].startswith("Flexible (ANCF): ") and said[1].startswith("Rigid: ")
    labels = {b.label for b in at.get("download_button")}
    assert {"Tip trajectory, ancf (CSV)", "Tip trajectory, rigid (CSV)"} <= labels


def test_a_grid_that_is_not_a_multiple_of_the_step_gives_an_error_and_keeps_the_run(simulated):
    at = simulated
    before = at.session_state[state.MULTIBODY]["sim"]
    at.number_input(key=state.MB_DT_OUT).set_value(0.0123).run()
    at.button(key=state.MB_SIMULATE).click().run()
    clean(at)
    (err,) = [e.value for e in at.error]
    assert err.startswith("The pendulum was not simulated") and "dt\\_out" in err and "multiple" in err
    assert at.session_state[state.MULTIBODY]["sim"] is before  # the earlier results are kept
    at.number_input(key=state.MB_DT_OUT).set_value(0.05).run()


def test_a_bad_trajectory_upload_gives_a_message():
    at = page()
    at.radio(key=state.MB_TRAJ_SOURCE).set_value("upload a CSV").run()
    bad = b"t,x_B,y_B\n0,2.4,-1.7\n0.05,2.4\n0.1,abc,-1.8\n"
    at.file_uploader(key=state.MB_TRAJ_UPLOAD).set_value(("traj.csv", bad, "text/csv")).run()
    clean(at)
    errors = [e.value.replace("\\", "") for e in at.error]  # shown escaped for markdown
    assert len(errors) == 1 and errors[0].startswith("The trajectory was not read: file 'traj.csv'"), errors
    assert "column 'x_B'" in errors[0] and "row 3" in errors[0]  # the reader's own message: what and where
    assert at.button(key=state.MB_IDENTIFY).disabled


def test_the_form_is_kept_across_a_page_change():
    at = page()
    at.number_input(key=state.MB_E_AB).set_value(3e7).run()
    at.number_input(key=state.MB_THETA1).set_value(0.7).run()
    go(at, "home")
    go(at, "multibody")
    assert at.number_input(key=state.MB_E_AB).value == pytest.approx(3e7)
    assert at.number_input(key=state.MB_THETA1).value == pytest.approx(0.7)
    at.button(key=state.MB_PRESET).click().run()
    clean(at)
    assert at.number_input(key=state.MB_E_AB).value == pytest.approx(2e7)


def test_the_deterministic_fit_recovers_the_release_angles(simulated):
    at = simulated
    at.radio(key=state.MB_TRAJ_SOURCE).set_value("the simulated flexible run (tab 2)").run()
    at.button(key=state.MB_IDENTIFY).click().run()
    clean(at)
    assert not at.error, [e.value for e in at.error]
    fit = at.session_state[state.MULTIBODY]["fit"]["fit"]
    # its own trajectory (0.3 s): least squares with exact sensitivities lands on the truth (seen: 1e-15 rad)
    assert fit.estimate("theta1").value == pytest.approx(math.pi / 4, abs=1e-7)
    assert fit.estimate("theta2").value == pytest.approx(math.pi / 6, abs=1e-7)
    table = next(d.value for d in at.dataframe if list(d.value.columns[:3]) == ["parameter", "value", "± stderr"])
    assert table["parameter"].tolist() == ["theta1", "theta2"] and "truth" in table.columns
    assert "95 % low" in table.columns and (table["95 % low"] <= table["value"]).all()
    assert len(at.get("plotly_chart")) == 3  # animation, trajectory, fitted against given
    assert any(b.label == "Download the fit (JSON)" for b in at.get("download_button"))


def test_the_papers_table_a1_is_fitted_when_the_data_is_there():
    from tests.conftest import shared_data_dir

    if shared_data_dir() is None or not (shared_data_dir() / "pendulum").is_dir():
        pytest.skip("the pendulum data is not available (../shared/data/pendulum)")
    at = page()
    assert at.radio(key=state.MB_TRAJ_SOURCE).value == "the paper's Table A1"
    at.button(key=state.MB_IDENTIFY).click().run()
    clean(at)
    fit = at.session_state[state.MULTIBODY]["fit"]["fit"]
    # the table is reproduced to about 0.5 mm (seen: 0.34 mm rms, θ within 7e-5 rad of π/4 and π/6)
    assert fit.rms_m < 1e-3
    assert abs(fit.estimate("theta1").value - math.pi / 4) < 1e-3
    assert abs(fit.estimate("theta2").value - math.pi / 6) < 1e-3


def test_interval_forward_then_inverse_on_a_short_grid():
    at = page()
    at.number_input(key=state.MB_T_END).set_value(0.5).run()
    at.number_input(key=state.MB_ORDER).set_value(2).run()
    at.button(key=state.MB_FORWARD).click().run()
    clean(at)
    assert not at.error, [e.value for e in at.error]
    analysis = at.session_state[state.MULTIBODY]["forward"]["analysis"]
    assert at.session_state[state.MULTIBODY]["forward"]["paper"] is False  # 0.5 s is not the paper's case
    assert analysis.bounds.t[-1] == pytest.approx(0.5)
    assert analysis.holdout_max < 1e-3  # order 2 over ±5 % for 0.5 s (seen: 0.03 mm)
    assert any("Held-out error of the surrogate" in m.value for m in at.markdown)
    assert any(b.label == "Download the bounds (CSV)" for b in at.get("download_button"))
    # the interval inverse on those bounds: PSO and IPSO on one surrogate, side by side
    at.radio(key=state.MB_BOUNDS_SOURCE).set_value("the forward analysis's bounds (tab 4)").run()
    at.number_input(key=state.MB_INV_ORDER).set_value(2).run()
    at.number_input(key=state.MB_ITERATIONS).set_value(30).run()
    at.button(key=state.MB_INVERSE).click().run()
    clean(at)
    assert not at.error, [e.value for e in at.error]
    pso, ipso = at.session_state[state.MULTIBODY]["inverse"]["results"]
    assert (pso.method, ipso.method) == ("pso", "ipso") and pso.forward_runs == ipso.forward_runs
    best = min((pso, ipso), key=lambda r: r.fitness)
    for iv, want in zip(best.intervals, analysis.intervals):  # the box the bounds came from (seen: within 3e-3)
        assert iv.lower == pytest.approx(want.lower, abs=0.01) and iv.upper == pytest.approx(want.upper, abs=0.01)
    table = next(d.value for d in at.dataframe if list(d.value.columns) == ["quantity", "PSO", "IPSO"])
    assert "fitness [m²]" in table["quantity"].tolist() and "theta1 [rad]" in table["quantity"].tolist()
    assert any(b.label == "Download the results (JSON)" for b in at.get("download_button"))


def test_a_run_that_fails_is_reported_and_drawn_up_to_the_failure():
    at = page()
    at.number_input(key=state.MB_E_OA).set_value(1e13).run()
    at.number_input(key=state.MB_E_AB).set_value(1e13).run()
    at.number_input(key=state.MB_DT).set_value(1e-2).run()  # far too long a step for such stiff rods
    at.button(key=state.MB_SIMULATE).click().run()
    clean(at)
    (err,) = [e.value.replace("\\", "") for e in at.error]
    assert err.startswith("Flexible (ANCF): ") and "reduce 'dt'" in err  # the core's message, what to change
    assert [s.value.split(":")[0] for s in at.success] == ["Rigid"]
    flex, _ = at.session_state[state.MULTIBODY]["sim"]["runs"]
    assert not flex.success and len(at.get("plotly_chart")) == 2


def test_a_bounds_upload_is_read_or_refused_with_the_row():
    at = page()
    at.radio(key=state.MB_BOUNDS_SOURCE).set_value("upload a CSV").run()
    assert at.button(key=state.MB_INVERSE).disabled
    good = ("t,x_B_min,x_B_max,y_B_min,y_B_max\n0,2.38,2.49,-1.78,-1.63\n0.05,2.38,2.49,-1.79,-1.64\n"
            "0.1,2.36,2.47,-1.81,-1.67\n")
    at.file_uploader(key=state.MB_BOUNDS_UPLOAD).set_value(("b.csv", good.encode(), "text/csv")).run()
    clean(at)
    assert not at.error and not at.button(key=state.MB_INVERSE).disabled
    bad = good.replace("0.05,2.38,2.49", "0.05,2.50,2.49")
    at.file_uploader(key=state.MB_BOUNDS_UPLOAD).set_value(("b.csv", bad.encode(), "text/csv")).run()
    clean(at)
    (err,) = [e.value.replace("\\", "") for e in at.error]
    assert err.startswith("The bounds were not read: file 'b.csv'") and "row 2" in err and "x_B_min" in err
    assert at.button(key=state.MB_INVERSE).disabled
