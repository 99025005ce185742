"""AppTest smoke and behaviour tests of every dashboard page (no browser)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_support import state
from nlid_core.examples import SEED_TRUTH

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 90


def fresh() -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.run()
    assert not at.exception
    return at


def with_example() -> AppTest:
    at = fresh()
    at.button(key="load_example").click().run()
    assert not at.exception
    return at


def go(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_home_renders_and_loads_the_example():
    at = fresh()
    assert "nlid" in at.title[0].value
    at.button(key="load_example").click().run()
    assert not at.exception
    recs = at.session_state[state.RECORDS]
    assert list(recs) == ["seed"] and recs["seed"].n == 6000


@pytest.mark.parametrize("page", ["data", "nonlinearity", "model", "identify", "validate", "export"])
def test_every_page_renders_without_data(page):
    at = fresh()
    go(at, page)
    assert at.info or at.markdown  # tells the user what to do


def test_pages_with_the_example_loaded():
    at = with_example()
    go(at, "data")
    assert at.selectbox(key="data_record").value == "seed"
    go(at, "nonlinearity")
    assert any("harmonic" in m.value.lower() for m in at.markdown)
    go(at, "model")
    assert at.multiselect(key="terms").value == ["m0", "m1", "c1", "c2", "k1", "k3"]


def test_identify_validate_export_workflow():
    at = with_example()
    go(at, "model")
    go(at, "identify")
    at.button(key="run_identification").click().run()
    assert not at.exception
    run = at.session_state[state.RUNS][-1]
    assert run.result.success
    assert abs(run.result.estimate("k1").value / SEED_TRUTH["k1"] - 1) < 0.01
    assert at.dataframe[0].value["parameter"].tolist() == ["m0", "m1", "c1", "c2", "k1", "k3"]
    go(at, "validate")
    assert at.dataframe[0].value["fit [%]"].iloc[0] > 95
    go(at, "export")
    at.button(key="build_report").click().run()
    assert not at.exception
    run_id, html = at.session_state["nlid_report_html"]
    assert run_id == run.id and "<html" in html and "k3" in html


def test_bad_upload_keeps_earlier_data(tmp_path):
    at = with_example()
    go(at, "data")
    at.file_uploader(key="upload").set_value(("broken.csv", b"t,f,x\n0,1\nabc,2,3\n", "text/csv")).run()
    at.button(key="load_upload").click().run()
    assert not at.exception
    assert any("broken.csv" in e.value.replace("\\", "") for e in at.error)  # names are markdown-escaped
    assert list(at.session_state[state.RECORDS]) == ["seed"]


def test_good_upload_of_another_system(tmp_path):
    t = np.arange(3000) / 200.0
    f = 5 * np.sin(2 * np.pi * (0.5 * t + 0.1 * t * t))
    frame = pd.DataFrame({"time": t, "load": f, "disp_mm": 1e3 * 0.001 * np.sin(t)})
    at = fresh()
    go(at, "data")
    at.file_uploader(key="upload").set_value(("rig.csv", frame.to_csv(index=False).encode(), "text/csv")).run()
    at.text_input(key="columns").set_value("t=time,f=load,x=disp_mm").run()
    at.text_input(key="units").set_value("x=mm").run()
    at.button(key="load_upload").click().run()
    assert not at.exception
    rec = at.session_state[state.RECORDS]["rig"]
    assert rec.unit("x") == "m" and abs(rec.x.max() - 0.001) < 1e-6


def test_failed_run_is_reported_and_earlier_results_stay():
    at = with_example()
    go(at, "identify")
    at.button(key="run_identification").click().run()
    good = at.session_state[state.RUNS][-1]
    cfg = at.session_state[state.CONFIG]
    # a start that cannot be simulated (output error from a softening spring that escapes), and a budget of one
    # evaluation, too small for the fit from the automatic initial guess it then takes
    bad_params = cfg.params.with_values({"k1": -500.0, "k3": -1e7, "m1": 0.0})
    at.session_state[state.CONFIG] = dataclasses.replace(
        cfg, params=bad_params, options=dataclasses.replace(cfg.options, method="output-error", max_nfev=1))
    at.run()
    at.button(key="run_identification").click().run()
    assert not at.exception
    assert any("failed" in e.value for e in at.error)
    assert at.session_state[state.ACTIVE_RUN] == good.id
    assert len(at.session_state[state.RUNS]) == 2


def test_identifiability_page_names_the_weakest_parameter():
    at = with_example()
    go(at, "identify")
    at.button(key="run_identification").click().run()
    go(at, "identifiability")
    assert any("Weakest parameter: m1" in s.value for s in at.subheader)
    at.button(key="run_profile").click().run()
    assert not at.exception


def test_design_page_predicts_and_compares():
    at = fresh()
    go(at, "design")
    frame = next(d.value for d in at.dataframe if "design" in d.value.columns)
    assert frame["ok"].iloc[0]
    # the default 30 N 0.5-10 Hz chirp determines m1 to better than 10 % (prior: the seed model)
    assert float(frame["m1"].iloc[0]) < 10  # cells are text: ">10000" for an undetermined parameter
    at.button(key="add_design").click().run()
    assert not at.exception


@pytest.mark.parametrize("system, structure", [("System A", "hardening spring"), ("System B", "softening spring"),
                                               ("System C", "linear oscillator"), ("System D", "Coulomb friction")])
def test_teaching_mode_every_system_with_its_default_test(system, structure):
    """Every step on every system with its default test, as a class would see it: the evidence (from a record of
    displacement only) and the linear fit without the answer, then identify, then the reveal. System B's default
    test once diverged. (The browser test walks System B.)"""
    at = fresh()
    go(at, "teaching")
    at.selectbox(key=state.TEACH_SYSTEM).set_value(system).run()
    at.button(key="teach_measure").click().run()
    text = " ".join(m.value for m in at.markdown)
    assert "verdict" in text and "Linear fit:" in text, system
    assert f"{system}** is a" not in text  # the evidence is the exercise: no answer yet
    if system == "System A":  # the verdict names the cubic; the class takes the full model
        assert any(m.value.startswith("- verdict") and "k3" in m.value for m in at.markdown)
        at.multiselect(key="teach_terms").set_value(["m0", "m1", "c1", "c2", "k1", "k3"]).run()
    at.button(key="teach_identify").click().run()
    at.toggle(key="teach_reveal").set_value(True).run()
    text = " ".join(m.value for m in at.markdown)
    assert "on a second test at 60 % of the level" in text, system
    assert f"**{system}** is a **{structure}" in text, system
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "Analysis failed" not in text and "step size" not in text
    if system == "System A":
        truth = next(d.value for d in at.dataframe if "true" in d.value.columns)
        k1 = truth[truth["term"] == "k1"].iloc[0]
        assert abs(k1["estimate"] / k1["true"] - 1) < 0.01


def test_identifiability_studies_run_from_the_page():
    at = with_example()
    go(at, "identify")
    at.button(key="run_identification").click().run()
    go(at, "identifiability")
    at.button(key="run_regularisation").click().run()
    assert not at.exception
    at.button(key="run_structure").click().run()
    assert not at.exception
    assert any("k3" in m.value for m in at.markdown)


def test_evidence_validation_and_studies_after_a_run():
    at = with_example()
    go(at, "identify")
    at.button(key=state.IDENTIFY_RUN).click().run()
    go(at, "nonlinearity")
    assert not any("Run an identification" in c.value for c in at.caption)  # the model's surface is drawn
    assert not any("Dotted lines: harmonics" in c.value for c in at.caption)  # a chirp: no single frequency to mark
    go(at, "validate")
    assert any("Residual rms" in c.value for c in at.caption)
    go(at, "identifiability")
    at.number_input(key=state.IDENT_N_STARTS).set_value(2).run()
    at.button(key=state.IDENT_RUN_MULTISTART).click().run()
    assert not at.exception
    assert any("spread at the best cost [%]" in d.value.columns for d in at.dataframe)
    at.button(key=state.IDENT_RUN_REGULARISATION).click().run()
    assert not at.exception
    errors = next(d.value for d in at.dataframe if "λ" in d.value.columns and "rel" not in d.value.columns
                  and (d.value.drop(columns="λ") > 0).all().all())
    assert len(errors) == 13


# --------------------------------------------------------------------------- units, numbers, intervals, whiteness
def test_the_run_comparison_marks_a_failed_run_and_shows_each_fit():
    import dataclasses

    from app_support import tables
    from nlid_core.estimate import identify
    from nlid_core.examples import make_example

    rec = make_example("seed")
    fit = identify(rec, ("m0", "c1", "k1", "k3"))
    cfg = state.default_config(("m0", "c1", "k1", "k3"), ("seed",))
    ok = state.Run(id=1, label="#1", created="", config=cfg, result=fit, elapsed_s=1.0)
    bad = state.Run(id=2, label="#2", created="", config=cfg, elapsed_s=1.0,
                    result=dataclasses.replace(fit, success=False, message="the start values cannot be simulated"))
    frame = tables.compare_table([ok, bad])
    assert frame.loc["status"].tolist() == ["converged", "FAILED"]
    assert frame.loc["k3", "run #2"] == tables.EMPTY and "±" in frame.loc["k3", "run #1"]  # no values of a failure
    assert frame.loc["RMSE (seed: x)", "run #1"].endswith(("m", "µm", "mm")) and pd.isna(frame.loc["RMSE (seed: x)", "run #2"])


def test_table_builders_write_units_in_words_and_round_numbers():
    from app_support import tables
    from nlid_core.metrics import channel_metrics

    assert tables.unit_text("1") == "dimensionless" and tables.unit_text("") == "dimensionless"
    assert tables.unit_text("V/s") == "V/s"
    rng = np.random.default_rng(0)
    y = rng.standard_normal(500)
    frame = tables.metrics_table([channel_metrics("rec", "x", "V", y, y + 0.1 * rng.standard_normal(500)),
                                  channel_metrics("rec", "f", "1", y, y + 0.1 * rng.standard_normal(500))])
    assert frame["unit"].tolist() == ["mV", "dimensionless"]  # an RMSE of 0.1 V reads 100 mV
    assert 80 < frame["RMSE"].iloc[0] < 120
    assert frame["residual"].tolist() == ["simulation error", "equation error"]
    assert frame["lags"].tolist() == [50, 50] and tables.WHITENESS_P in frame.columns
    cfg = tables.number_format(frame)
    assert cfg[tables.WHITENESS_P]["type_config"]["format"] == "%.2g"
    assert cfg["lags"]["type_config"]["format"] == "%d"
    shown = tables._rounded(pd.DataFrame({"force NRMSE [%]": [63.7144], "variance inflation": [3355.987]}))
    assert shown.iloc[0].tolist() == [63.71, 3356.0]


def test_the_known_answer_note_states_measured_coverage_only_for_its_design():
    from app_support import known_answer
    from nlid_core.estimate import identify
    from nlid_core.examples import make_example

    study = known_answer.SEED_COVERAGE
    assert set(study.coverage) == set(SEED_TRUTH)
    assert all(0.0 < c <= 1.0 for c in study.coverage.values()) and 0.0 < study.all_inside <= 1.0
    assert f"--draws {study.draws}" in study.command and (REPO / study.command.split()[1]).is_file()
    seed = make_example("seed")
    other_draw = make_example("seed", overrides={"seed": 7})
    stronger = make_example("seed", overrides={"amplitude_n": 12.0})
    # the measured figures belong to the example as it is: change its design and they must be measured again
    assert known_answer.design_of(seed) == dict(study.design), "re-run bench/bench_seed_coverage.py"
    assert known_answer._is_design(seed, study) and known_answer._is_design(other_draw, study)
    assert not known_answer._is_design(stronger, study)
    fit = identify(seed, "m0,m1,c1,c2,k1,k3")
    note = known_answer.interval_note(fit, {"seed": seed})
    misses = [e.name for e in fit.estimates if not e.ci[0] <= SEED_TRUTH[e.name] <= e.ci[1]]
    assert note is not None and f"{6 - len(misses)} of 6 95 % intervals" in note
    assert all(f"{n} (true" in note for n in misses)
    assert "Measured on this test design" in note and study.command in note
    fit_strong = identify(stronger, "m0,m1,c1,c2,k1,k3")
    note_strong = known_answer.interval_note(fit_strong, {"seed": stronger})
    assert note_strong is not None and "Measured on this test design" not in note_strong
    assert known_answer.interval_note(fit, {}) is None  # the record is gone: nothing is claimed
    no_m1 = identify(seed, "m0,c1,c2,k1,k3")
    note_no_m1 = known_answer.interval_note(no_m1, {"seed": seed})
    assert note_no_m1 is not None and "leaves out m1" in note_no_m1
    assert "Measured on this test design" not in note_no_m1 and "no sign of a wrong model" not in note_no_m1


def test_identify_and_validate_label_and_agree_on_the_whiteness_of_the_fitted_record():
    at = with_example()
    go(at, "identify")
    at.button(key=state.IDENTIFY_RUN).click().run()
    assert not at.exception
    assert any("Known answer" in i.value and "Measured on this test design" in i.value for i in at.info)
    params = at.dataframe[0].value
    assert "1" not in params["unit"].tolist()
    metrics = next(d.value for d in at.dataframe if "residual" in d.value.columns)
    assert metrics["residual"].tolist() == ["simulation error"] and metrics["lags"].tolist() == [50]
    p_identify = metrics["whiteness p (Ljung-Box)"].iloc[0]
    assert any("Ljung-Box test of the simulation error over lags 1-50" in c.value for c in at.caption)
    go(at, "validate")
    assert at.radio(key=state.VALIDATE_INIT).value.startswith("the fit's own")
    val = next(d.value for d in at.dataframe if "residual" in d.value.columns)
    assert val["whiteness p (Ljung-Box)"].iloc[0] == pytest.approx(p_identify, abs=0.01)
    at.radio(key=state.VALIDATE_INIT).set_value("estimated from the first samples").run()
    assert not at.exception
    assert any("estimated from the first 50 samples" in c.value for c in at.caption)


def test_teaching_mode_offers_only_tests_the_system_survives():
    at = fresh()
    go(at, "teaching")
    at.selectbox(key=state.TEACH_SYSTEM).set_value("System B").run()  # softening: 10 N would carry it over its barrier
    assert at.slider(key=state.TEACH_AMPLITUDE).value == 4.0
    assert not at.button(key=state.TEACH_MEASURE).disabled and not at.warning
    at.slider(key=state.TEACH_AMPLITUDE).set_value(10.0).run()
    assert at.button(key=state.TEACH_MEASURE).disabled
    warning = at.warning[0].value
    assert "would make the system diverge" in warning and "cannot be run" in warning
    assert "step size" not in warning.lower()  # no integrator's words reach a student
    at.selectbox(key=state.TEACH_SYSTEM).set_value("System C").run()  # another system: its own default test
    assert at.slider(key=state.TEACH_AMPLITUDE).value == 10.0 and not at.button(key=state.TEACH_MEASURE).disabled


def test_teaching_mode_names_no_structure_before_the_reveal():
    at = fresh()
    go(at, "teaching")
    box = at.selectbox(key=state.TEACH_SYSTEM)
    assert [o.split(":")[0] for o in box.options] == ["System A", "System B", "System C", "System D"]
    words = ("spring", "friction", "linear oscillator", "damping", "duffing", "coulomb", "seed")
    assert not any(w in o.lower() for o in box.options for w in words)
    box.set_value("System D").run()
    assert not at.exception and not at.error
    steps_1_to_3 = " ".join(m.value for m in at.markdown).lower()
    assert "predicted relative standard errors of the linear coefficients" in steps_1_to_3
    assert not any(w in steps_1_to_3 for w in ("coulomb", "friction", "**fc**"))
    # step 4 (what the evidence finds, without the answer) and the reveal: the browser test walks every system


def test_validate_simulates_the_run_inside_the_position_loop():
    """A drive axis simulated in its PD loop is identified from its record; on the Validate page the model inside
    the same loop, driven by the reference record, reproduces position and force; a bad controller is one error."""
    from nlid_core.closed_loop import PositionLoop, simulate_closed_loop
    from nlid_core.models import TermModel
    from nlid_core.record import Record

    model = TermModel(("m0", "c1", "fc", "f0"))
    truth = model.default_parameters().with_values({"m0": 95.0, "c1": 200.0, "fc": 20.0, "f0": -3.0})
    t = np.arange(2000) / 1000.0
    ref = 0.01 * (1 - np.cos(np.pi * t)) + 0.002 * np.sin(6 * np.pi * t)
    loop = "kp=160.18,kv=243.45,gain=35.15,limit=10,delay=1"
    sim = simulate_closed_loop(model, truth, t, ref, PositionLoop(kp=160.18, kv=243.45, gain=35.15, limit=10.0))
    rng = np.random.default_rng(3)
    axis = Record(name="axis", t=t, f=sim.force + rng.normal(0, 1.0, t.size), x=sim.x + rng.normal(0, 1e-6, t.size))
    at = fresh()
    at.session_state[state.RECORDS] = {"axis": axis, "qg": Record(name="qg", t=t, f=np.zeros(t.size), x=ref)}
    go(at, "model")
    at.multiselect(key="terms").set_value(["m0", "c1", "fc", "f0"]).run()
    go(at, "identify")
    at.button(key="run_identification").click().run()
    assert not at.exception and at.session_state[state.RUNS][-1].result.success
    go(at, "validate")
    at.selectbox(key="val_record").set_value("axis").run()
    at.selectbox(key="val_loop_reference").set_value("qg").run()
    at.text_input(key="val_loop_spec").set_value("kp=160.18,kv=fast,gain=35.15").run()
    at.button(key="val_loop_run").click().run()
    assert not at.exception and any("kv" in e.value and "needs a number" in e.value for e in at.error), [e.value for e in at.error]
    at.text_input(key="val_loop_spec").set_value(loop).run()
    at.button(key="val_loop_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    (key, check), = at.session_state[state.LOOP_CHECKS].items()
    assert key[1:] == ("axis", "qg", "none", loop) and check.run.success
    # the noise sets the force error (1 N on a force of ~20 N rms); the position follows to a fraction of a per cent
    assert check.errors["x"] < 0.5 and check.errors["f"] < 10, check.errors
    assert any("position" in m.value and "force" in m.value for m in at.markdown)
    # fitted inside the same loop on the Identify page: a run like any other, close to the truth
    go(at, "identify")
    at.selectbox(key="ident_loop_reference").set_value("qg").run()
    at.text_input(key="ident_loop_spec").set_value(loop).run()
    at.button(key="ident_loop_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    fit = at.session_state[state.RUNS][-1].result
    assert fit.method == "closed-loop" and fit.success, fit.message
    assert any("closed-loop errors" in c.value for c in at.caption)
    assert set(at.dataframe[1].value["residual"]) == {"closed-loop error"}
    for name in ("m0", "c1", "fc"):
        e = fit.estimate(name)
        assert e.ci[0] <= truth[name].value <= e.ci[1] or abs(e.value / truth[name].value - 1) < 0.02, (name, e)
