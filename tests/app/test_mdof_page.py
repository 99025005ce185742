"""AppTest of the Multi-DOF page: presets render, a bad model file is refused with a message, the chain's
simulated experiments are identified stage by stage, and the plan editor round-trips through TOML."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_support import mdof as md
from app_support import state
from nlid_core.mdof.modelfile import parse_model
from nlid_core.mdof.presets import chain, platform
from nlid_core.mdof.stages import default_plan, dump_plan, parse_plan

from .test_pages import fresh, go


def mdof_page() -> AppTest:
    return go(fresh(), "mdof")


def press(at: AppTest, *keys: str) -> AppTest:
    """Click the buttons of ``keys`` in turn (each click runs the page); no exception on the way."""
    for key in keys:
        at.button(key=key).click().run()
        assert not at.exception, (key, [e.value for e in at.exception])
    return at


@pytest.mark.parametrize("kind", ["chain", "platform"])
def test_presets_render_with_description_diagram_and_parameters(kind):
    at = mdof_page()
    at.radio(key=state.MDOF_SOURCE).set_value(kind).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    model = at.session_state[state.MDOF]["model"]
    assert model.body == (kind == "platform")
    assert model.describe() in [c.value for c in at.code]
    assert at.get("plotly_chart"), "no model diagram"
    params = next(d.value for d in at.dataframe if list(d.value.columns[:3]) == ["parameter", "unit", "start value"])
    assert params["parameter"].tolist() == list(model.param_names)
    assert any(b.label.startswith("Download the model file") for b in at.get("download_button"))


def test_a_bad_model_file_gives_an_error_and_no_exception():
    at = mdof_page()
    at.radio(key=state.MDOF_SOURCE).set_value("model file").run()
    bad = b'name = "rig"\n[[dof]]\nname = "x1"\n[[connection]]\nname = "s1"\nbetween = ["x1", "x9"]\nterms = ["k1"]\n'
    at.file_uploader(key=state.MDOF_UPLOAD).set_value(("rig.toml", bad, "application/toml")).run()
    assert not at.exception, [e.value for e in at.exception]
    (err,) = [e.value for e in at.error]
    assert "x9" in err and "not a DOF" in err  # the parser's own message, naming what to fix
    assert "uploaded" not in at.session_state[state.MDOF]


def test_model_figure_lays_out_chain_and_platform():
    model = chain(3, fixed_end=True)
    fig = md_figure(model)
    names = [a.text for a in fig.layout.annotations]
    assert names[:5] == ["ground", "x1", "x2", "x3", "ground "]  # the far end's ground at the right
    terms = " + ".join(t.name for t in model.connections[0].terms)  # k1, k3, c1, c2 in the model's order
    assert names[5:] == [f"{c}: {terms}" for c in ("g1", "s12", "s23", "g3")]  # one labelled edge per connection
    pts = {t.name: (list(t.x), list(t.y)) for t in fig.data if t.mode == "markers"}
    assert pts["mass"] == ([1.0, 2.0, 3.0], [0.0, 0.0, 0.0]) and pts["ground"][0] == [0.0, 4.0]
    fig = md_figure(platform())
    body = next(t for t in fig.data if t.fill == "toself")
    # the outline runs through the four mount points (±0.5, ±0.4), closed
    assert sorted(zip(body.x[:-1], body.y[:-1])) == [(-0.5, -0.4), (-0.5, 0.4), (0.5, -0.4), (0.5, 0.4)]
    pts = {t.name: (list(t.x), list(t.y)) for t in fig.data if t.mode == "markers"}
    assert pts["body point"] == ([0.0, 0.02], [0.0, -0.015])  # O and the CoG at (cx, cy)


def md_figure(model):  # type: ignore[no-untyped-def]
    from nlid_core.figures.mdof import model_figure

    return model_figure(model)


@pytest.fixture(scope="module")
def staged() -> AppTest:
    at = mdof_page()
    at.number_input(key=state.MDOF_DURATION).set_value(5.0)  # half the default length: a faster test
    return press(at, state.MDOF_SIMULATE, state.MDOF_RUN_ALL)


def test_the_chain_is_identified_stage_by_stage(staged):
    at = staged
    store = at.session_state[state.MDOF]
    truth = store["truth"]
    start = store["start"]
    # the start is perturbed (±30 %), so the stages had something to do
    assert max(abs(start[n].value / truth[n] - 1) for n in ("m_x1", "m_x2", "m_x3")) > 0.02
    reports = store["reports"]
    assert [r.stage.name for r in reports] == ["static", "small", "sweeps", "joint"]
    final = store["params"][-1]
    for n in ("m_x1", "m_x2", "m_x3"):  # noise 0.5 % of range: the masses come back within 1 % (seen: 0.05 %)
        assert final[n].value == pytest.approx(truth[n], rel=0.01), n
    summary = next(d.value for d in at.dataframe if list(d.value.columns[:2]) == ["stage", "records"])
    assert summary["stage"].tolist() == ["1. static", "2. small", "3. sweeps", "4. joint"]
    # the last estimates table is the joint stage's: every free parameter, its truth and its error
    est = [d.value for d in at.dataframe if "error [%]" in d.value.columns][-1]
    assert est["parameter"].tolist() == list(truth)
    masses = est.set_index("parameter").loc[["m_x1", "m_x2", "m_x3"], "error [%]"]
    assert masses.abs().max() < 1.0
    assert any("Trust." in m.value for m in at.markdown)
    # the evidence tab: by default the FRF matrix of the two long records in which nothing was held
    evidence = " ".join(m.value.replace("\\", "") for m in at.markdown)
    assert "FRF matrix from multi1, multi2" in evidence and "x3 responds mostly to f_x1" in evidence
    assert not at.error, [e.value for e in at.error]
    # the default plan keeps the last multi-input record out of the stages; the validation tab defaults to it
    assert reports[-1].records == ("static", "small", "sweep_x1", "multi1")
    assert at.selectbox(key=state.MDOF_VALIDATE_RECORD).value == "multi2"
    assert not any("Not a validation" in w.value for w in at.warning)
    val = next(d.value for d in at.dataframe if {"channel", "fit [%]"} <= set(d.value.columns))
    assert val["channel"].tolist() == ["x1", "x2", "x3"] and (val["fit [%]"] > 90).all()
    assert set(val["unit"]) <= {"m", "mm", "µm"}


def test_one_shot_comparison_and_downloads_after_the_stages(staged):
    at = press(staged, state.MDOF_ONE_SHOT)
    assert not at.error, [e.value for e in at.error]
    routes = next(d.value for d in at.dataframe if list(d.value.columns[:2]) == ["route", "ok"])
    assert routes["route"].tolist() == ["staged (4 stages)", "one-shot"]
    assert (routes["seconds"] > 0).all() and routes["condition"].notna().all()
    per_param = next(d.value for d in at.dataframe if "one-shot error [%]" in d.value.columns)
    assert per_param["parameter"].tolist() == list(at.session_state[state.MDOF]["truth"])
    masses = per_param.set_index("parameter").loc[["m_x1", "m_x2", "m_x3"]]
    assert masses["staged error [%]"].abs().max() < 1.0  # the staged route's masses, as in the stage table
    store = at.session_state[state.MDOF]
    written = parse_model(md.final_model_file(store)).parameters()  # the model file carries the estimates
    assert written.as_dict() == md.final_parameters(store).as_dict()
    labels = {b.label for b in at.get("download_button")}
    assert {"Estimates (CSV)", "Model file with the estimates (TOML)", "Plan (TOML)",
            "Report (JSON, as identify --model --json)", "Report (text)"} <= labels
    # the report is the CLI's document: every stage, the final estimates with their intervals
    text, doc = md.staged_report(store)
    report = json.loads(doc)
    assert report["success"] and [s["name"] for s in report["stages"]] == ["static", "small", "sweeps", "joint"]
    assert report["parameters"]["m_x1"]["value"] == store["params"][-1]["m_x1"].value
    assert report["parameters"]["m_x1"]["ci95"][0] < report["parameters"]["m_x1"]["value"]
    assert "stage 4 `joint`" in text


def test_plan_editor_round_trips_through_toml():
    model = chain(3)
    plan = default_plan(model)
    frame = md.plan_frame(plan)
    assert md.plan_from_frame(frame) == plan
    assert parse_plan(dump_plan(md.plan_from_frame(frame))) == plan
    edited = pd.concat([frame, pd.DataFrame([{"name": "extra", "records": "multi*, sweep*", "free": "k3*",
                                              "note": "more"}])], ignore_index=True)
    again = parse_plan(dump_plan(md.plan_from_frame(edited)))
    assert again.stages[-1].records == ("multi*", "sweep*") and again.stages[-1].free == ("k3*",)
    with pytest.raises(Exception, match="needs record patterns"):
        md.plan_from_frame(pd.DataFrame([{"name": "x", "records": "", "free": "k1*", "note": ""}]))


def test_a_plan_file_loads_into_the_editor_and_the_page_writes_it_back():
    at = press(mdof_page(), state.MDOF_SIMULATE)
    text = ('[[stage]]\nname = "stiff"\nrecords = ["static"]\nfree = ["k1_*"]\nnote = "statics"\n\n'
            '[[stage]]\nname = "all"\nrecords = ["*"]\nfree = ["*"]\n')
    at.file_uploader(key=state.MDOF_PLAN_UPLOAD).set_value(("plan.toml", text.encode(), "application/toml")).run()
    press(at, state.MDOF_PLAN_LOAD)
    assert not at.error, [e.value for e in at.error]
    plan = at.session_state[state.MDOF]["plan"]
    assert plan == parse_plan(text)
    assert dump_plan(plan) == text  # the page's plan file is the file it read
    shown = next(d.value for d in at.dataframe if list(d.value.columns) == list(md.PLAN_COLUMNS))
    assert shown["name"].tolist() == ["stiff", "all"] and shown["free"].tolist() == ["k1_*", "*"]
    assert any(b.label == "Run stage 1: stiff" for b in at.button)


def test_records_loaded_on_the_data_page_are_mapped_or_refused_by_name():
    from nlid_core.mdof.data import to_record
    from nlid_core.mdof.experiments import experiment_set

    model = chain(3)
    sweep = next(r for r in experiment_set(model, rng=2, duration=2.0) if r.name == "sweep_x1")
    at = mdof_page()
    at.session_state[state.RECORDS] = {"rig": to_record(model, sweep)}
    at.radio(key=state.MDOF_RECORDS_FROM).set_value("records loaded on the Data page").run()
    assert "t=time,f1=f1,x1=x1,x2=x2,x3=x3" in [c.value for c in at.code]  # the mapping for the Data page
    at.checkbox(key=state.key_for(state.MDOF_MAP_USE, "rig")).check().run()
    at.multiselect(key=state.key_for(state.MDOF_MAP_HELD, "rig")).set_value(["x2", "x3"]).run()
    press(at, state.MDOF_MAP)
    (rec,) = at.session_state[state.MDOF]["records"]
    assert rec.held == ("x2", "x3") and rec.y.tolist() == sweep.y.tolist()
    assert at.session_state[state.MDOF]["truth"] is None
    # a record of another model (one output, padded with a zero x2 by to_record) is refused with its name and
    # the output it lacks
    at.session_state[state.RECORDS] = {"other": to_record(chain(1), sweep.__class__(
        name="other", t=sweep.t, u=sweep.u, y=sweep.y[:, :1], input_names=("f_x1",), output_names=("x1",)))}
    at.run()
    at.checkbox(key=state.key_for(state.MDOF_MAP_USE, "other")).check().run()
    press(at, state.MDOF_MAP)
    (err,) = [e.value.replace("\\", "") for e in at.error]  # shown escaped for markdown
    assert "record 'other' has no column for output 'x3'" in err
    assert at.session_state[state.MDOF]["records"] == (rec,)  # the earlier records stay


def test_a_one_dof_model_names_its_single_dof_form():
    assert md.single_dof_note(chain(3)) == ""
    note = md.single_dof_note(chain(1))
    assert "`m0,c1,c2,k1,k3`" in note and "m_x1 = m0" in note and "identify --model" in note

