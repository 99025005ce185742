"""The Studies page and the Identify page's *Save run to study* as engineers use them (AppTest, no browser):
create, open into a new session, rename, duplicate, notes, delete only with the typed name, a saved run in
the comparison, export and import, a hostile file refused, two engineers kept apart, sharing, and a
database that cannot be opened."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_support import state, studies, study_actions, study_batches, study_compare
from nlid_core.store import archive
from nlid_core.store import studies as saved
from nlid_core.store.db import open_store

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 90


def shown(elements) -> list[str]:  # type: ignore[no-untyped-def]
    """Texts as the user reads them (markdown escapes removed)."""
    return [e.value.replace("\\", "") for e in elements]


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def session(user: str | None = None, *, example: bool = True, monkeypatch=None) -> AppTest:  # type: ignore[no-untyped-def]
    if user is not None:
        monkeypatch.setenv("NLID_LOCAL_USER", user)
    at = ok(AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run())
    if example:
        ok(at.button(key=state.HOME_LOAD_EXAMPLE).click().run())
    return ok(at.switch_page("app_pages/studies.py").run())


def create(at: AppTest, name: str) -> AppTest:
    at.text_input(key=state.STUDIES_NEW_NAME).set_value(name).run()
    return ok(at.button(key=state.STUDIES_CREATE).click().run())


def table(at: AppTest, column: str):  # type: ignore[no-untyped-def]
    """The first table with ``column`` (None when there is none)."""
    return next((d.value for d in at.dataframe if column in d.value.columns), None)


def listed(at: AppTest) -> list[str]:
    """The studies the page lists."""
    frame = table(at, "study")
    return [] if frame is None else frame["study"].tolist()


def sidebar(at: AppTest) -> str:
    return " ".join(shown(at.sidebar.markdown)).replace("**", "")


def test_create_rename_duplicate_notes_and_open_in_a_new_session(db_url, monkeypatch):
    at = session(monkeypatch=monkeypatch)
    assert any("No saved study yet" in i for i in shown(at.info))
    create(at, "shaker rig")
    assert any("Created shaker rig with 1 record(s)" in s for s in shown(at.success)), shown(at.error)
    assert "Open: shaker rig" in sidebar(at)
    frame = table(at, "study")
    assert frame.to_dict("records") == [{"study": "shaker rig", "owner": "you", "updated": frame["updated"][0],
                                         "records": 1, "runs": 0}]
    assert table(at, "record")["record"].tolist() == ["seed"]
    sid = at.session_state[state.OPEN_STUDY].id
    assert at.selectbox(key=state.STUDIES_PICK).value == sid

    at.text_input(key=state.key_for(state.STUDIES_RENAME_TO, sid)).set_value("shaker rig A").run()
    ok(at.button(key=state.STUDIES_RENAME).click().run())
    assert "Open: shaker rig A" in sidebar(at) and listed(at) == ["shaker rig A"]
    at.text_input(key=state.key_for(state.STUDIES_RENAME_TO, sid)).set_value("bad/name").run()
    ok(at.button(key=state.STUDIES_RENAME).click().run())
    assert any("not renamed" in e and "'new_name' may hold" in e for e in shown(at.error))

    at.text_area(key=state.key_for(state.STUDIES_NOTES, sid)).set_value("k3 *drifts* with temperature").run()
    ok(at.button(key=state.STUDIES_SAVE_NOTES).click().run())
    at.text_input(key=state.key_for(state.STUDIES_DUPLICATE_TO, sid)).set_value("rig B").run()
    ok(at.button(key=state.STUDIES_DUPLICATE).click().run())
    assert sorted(listed(at)) == ["rig B", "shaker rig A"]
    with open_store(db_url) as store:
        copy = saved.open_study(store, "local", "rig B")
        assert copy.notes == "k3 *drifts* with temperature"
        assert [r.name for r in saved.list_records(store, "local", copy.id)] == ["seed"]

    # another session of the same engineer, without data: opening loads the records as an upload would
    other = session(example=False, monkeypatch=monkeypatch)
    assert not other.session_state[state.RECORDS]
    other.selectbox(key=state.STUDIES_PICK).set_value(sid).run()
    ok(other.button(key=state.STUDIES_OPEN).click().run())
    recs = other.session_state[state.RECORDS]
    assert list(recs) == ["seed"] and recs["seed"].n == 6000
    assert other.session_state[state.CONFIG].fit_records == ("seed",)
    assert "Open: shaker rig A" in sidebar(other) and "seed: 6,000 samples" in sidebar(other)
    ok(other.button(key=state.STUDIES_OPEN).click().run())  # again: nothing loaded twice
    assert list(other.session_state[state.RECORDS]) == ["seed"]
    assert any("Already here: seed" in s for s in shown(other.success))


def test_delete_needs_the_typed_name(db_url, monkeypatch):
    at = session(monkeypatch=monkeypatch)
    create(at, "to go")
    sid = at.session_state[state.OPEN_STUDY].id
    ok(at.button(key=state.STUDIES_DELETE).click().run())
    assert any("Nothing was deleted" in e and "type the study's name" in e for e in shown(at.error))
    at.text_input(key=state.key_for(state.STUDIES_DELETE_CONFIRM, sid)).set_value("to g").run()
    ok(at.button(key=state.STUDIES_DELETE).click().run())
    assert any("Nothing was deleted" in e and "must repeat the study name" in e for e in shown(at.error))
    assert listed(at) == ["to go"]
    at.text_input(key=state.key_for(state.STUDIES_DELETE_CONFIRM, sid)).set_value("to go").run()
    ok(at.button(key=state.STUDIES_DELETE).click().run())
    assert any("Deleted to go" in s for s in shown(at.success))
    assert listed(at) == [] and state.OPEN_STUDY not in at.session_state
    assert "No saved study open" in sidebar(at) and list(at.session_state[state.RECORDS]) == ["seed"]


def test_a_run_saved_from_identify_shows_in_compare(db_url, monkeypatch):
    at = session(monkeypatch=monkeypatch)
    ok(at.switch_page("app_pages/identify.py").run())
    ok(at.button(key=state.IDENTIFY_RUN).click().run())
    run = at.session_state[state.RUNS][-1]
    assert run.result.success
    # no study open: the control offers to create one
    at.text_input(key=state.key_for(state.IDENTIFY_NEW_STUDY, run.id)).set_value("beam").run()
    at.text_input(key=state.key_for(state.IDENTIFY_SAVE_LABEL, run.id)).set_value("first fit").run()
    ok(at.button(key=state.IDENTIFY_CREATE_STUDY).click().run())
    assert any("Created beam (now the open study) and saved run #1 into it as first fit" in s
               for s in shown(at.success)), shown(at.error)
    assert "Open: beam" in sidebar(at)
    ok(at.button(key=state.IDENTIFY_RUN).click().run())  # a second run, saved into the open study
    run2 = at.session_state[state.RUNS][-1]
    # the new run is the active one (the selector follows it); choosing run 1 and back works
    assert at.selectbox(key=state.IDENTIFY_ACTIVE_RUN).value == run2.id
    assert at.session_state[state.ACTIVE_RUN] == run2.id
    ok(at.selectbox(key=state.IDENTIFY_ACTIVE_RUN).set_value(run.id).run())
    assert at.session_state[state.ACTIVE_RUN] == run.id and f"Run #{run.id}:" in at.subheader[0].value
    ok(at.selectbox(key=state.IDENTIFY_ACTIVE_RUN).set_value(run2.id).run())
    assert at.session_state[state.ACTIVE_RUN] == run2.id
    ok(at.button(key=state.IDENTIFY_SAVE_RUN).click().run())
    assert any(f"Saved run #{run2.id} into beam" in s for s in shown(at.success)), shown(at.error)

    ok(at.switch_page("app_pages/studies.py").run())
    shown_runs = next(d.value for d in at.dataframe if "#1 first fit" in d.value.columns).set_index("parameter")
    assert shown_runs.columns.tolist() == ["#1 first fit", f"#2 run {run2.id} {run2.result.method} m0,m1,c1,c2,k1,k3"]
    assert shown_runs.index.tolist() == ["m0", "m1", "c1", "c2", "k1", "k3", "cost", "converged", "fit RMSE (seed: x)"]
    assert shown_runs.loc["fit RMSE (seed: x)", "#1 first fit"].endswith(("µm", "mm"))
    k1 = run.result.estimate("k1")
    assert shown_runs.loc["k1", "#1 first fit"] == f"{k1.value:.6g} ± {k1.stderr:.3g}"
    assert at.selectbox(key=state.STUDIES_COMPARE_PARAM).options[:2] == ["m0", "m1"]
    at.selectbox(key=state.STUDIES_COMPARE_PARAM).set_value("k3").run()
    assert not at.exception and len(at.get("plotly_chart")) == 1
    create(at, "beam with the active run")  # a new study from the session: its records and the active run
    assert table(at, "study").set_index("study").loc["beam with the active run", ["records", "runs"]].tolist() == [1, 1]
    with open_store(db_url) as store:
        study = saved.open_study(store, "local", "beam")
        (stored, _) = saved.list_runs(store, "local", study.id)
        assert stored.config["fit_records"] == ["seed"] and stored.config["terms"] == list(run.config.terms)
        assert stored.config["options"]["method"] == run.config.options.method
        assert [r.name for r in saved.list_records(store, "local", study.id)] == ["seed"]  # the run's data too


def test_export_then_import_round_trip_and_a_hostile_file(db_url, monkeypatch):
    at = session(monkeypatch=monkeypatch)
    create(at, "rig")
    dl = at.get("download_button")
    assert [d.key for d in dl] == [state.STUDIES_EXPORT] and dl[0].proto.deferred_file_id  # built on click
    with open_store(db_url) as store:
        (study,) = saved.list_studies(store, "local")
        data = study_actions.exporter(store, "local", study.id)()  # what the click downloads
        assert data == archive.export_study(store, "local", study.id)
        assert study_actions.export_file_name(study) == "rig.nlid.zip"
    at.file_uploader(key=state.STUDIES_IMPORT_FILE).set_value(("rig.nlid.zip", data, "application/zip")).run()
    at.text_input(key=state.STUDIES_IMPORT_NAME).set_value("rig imported").run()
    ok(at.button(key=state.STUDIES_IMPORT).click().run())
    assert any("Imported rig imported as your study" in s for s in shown(at.success)), shown(at.error)
    assert sorted(listed(at)) == ["rig", "rig imported"]

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("../../etc/evil.json", b"{}")
    for name, bad, says in [("evil.nlid.zip", buf.getvalue(), "evil.json"),
                            ("junk.nlid.zip", b"PK\x03\x04 not really a zip", "zip")]:
        at.file_uploader(key=state.STUDIES_IMPORT_FILE).set_value((name, bad, "application/zip")).run()
        at.text_input(key=state.STUDIES_IMPORT_NAME).set_value("").run()
        ok(at.button(key=state.STUDIES_IMPORT).click().run())
        errors = shown(at.error)
        assert any("The file was not imported; nothing changed" in e and says in e for e in errors), errors
    assert sorted(listed(at)) == ["rig", "rig imported"]


def test_two_engineers_are_kept_apart_until_one_shares(db_url, monkeypatch):
    alice = session("alice", monkeypatch=monkeypatch)
    create(alice, "secret rig")
    sid = alice.session_state[state.OPEN_STUDY].id

    bob = session("bob", monkeypatch=monkeypatch)
    assert listed(bob) == [] and any("No saved study yet" in i for i in shown(bob.info))
    # a forged open study (another engineer's id in the session state) is dropped, never shown
    bob.session_state[state.OPEN_STUDY] = state.StudyRef(id=sid, name="secret rig", owner="alice", viewer="bob")
    ok(bob.run())
    assert "secret rig" not in sidebar(bob) and state.OPEN_STUDY not in bob.session_state
    create(bob, "secret rig")  # the same name is free for bob
    assert listed(bob) == ["secret rig"]
    own = bob.session_state[state.OPEN_STUDY].id
    assert own != sid and len(bob.selectbox(key=state.STUDIES_PICK).options) == 1  # only bob's own to pick

    monkeypatch.setenv("NLID_LOCAL_USER", "alice")
    ok(alice.run())
    alice.text_input(key=state.STUDIES_SHARE_WITH).set_value("bob").run()
    ok(alice.button(key=state.STUDIES_SHARE).click().run())
    assert any("Shared with bob" in s for s in shown(alice.success)), shown(alice.error)

    monkeypatch.setenv("NLID_LOCAL_USER", "bob")
    ok(bob.run())
    frame = table(bob, "study")
    assert frame[["study", "owner"]].values.tolist() == [["secret rig", "you"], ["secret rig", "alice"]]
    bob.selectbox(key=state.STUDIES_PICK).set_value(sid).run()
    keys_now = {w.key for w in bob.text_input}
    assert state.key_for(state.STUDIES_RENAME_TO, sid) not in keys_now  # read-only for bob
    assert state.key_for(state.STUDIES_DELETE_CONFIRM, sid) not in keys_now
    ok(bob.button(key=state.STUDIES_OPEN).click().run())
    assert "Open: secret rig (shared with you, read-only)" in sidebar(bob)
    assert list(bob.session_state[state.RECORDS]) == ["seed"]
    with open_store(db_url) as store:
        with pytest.raises(saved.DataValidationError, match="no study"):
            saved.rename_study(store, "bob", sid, "mine now")
        assert saved.get_study(store, "alice", sid).name == "secret rig"
    bob.text_input(key=state.key_for(state.STUDIES_DUPLICATE_TO, sid)).set_value("my copy").run()
    ok(bob.button(key=state.STUDIES_DUPLICATE).click().run())  # "Copy to my studies"
    assert sorted(table(bob, "study")[["study", "owner"]].values.tolist()) == [
        ["my copy", "you"], ["secret rig", "alice"], ["secret rig", "you"]]

    monkeypatch.setenv("NLID_LOCAL_USER", "alice")
    alice.selectbox(key=state.STUDIES_UNSHARE_WHO).set_value("bob").run()
    ok(alice.button(key=state.STUDIES_UNSHARE).click().run())
    assert any("No longer shared with bob" in s for s in shown(alice.success))
    monkeypatch.setenv("NLID_LOCAL_USER", "bob")
    ok(bob.run())
    assert "secret rig (shared" not in sidebar(bob) and "No saved study open" in sidebar(bob)
    assert sorted(listed(bob)) == ["my copy", "secret rig"]


def test_database_that_cannot_be_opened_is_named_and_the_rest_works(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the database directory should be")
    monkeypatch.setenv("NLID_DATABASE_URL", f"sqlite:///{blocker / 'studies.sqlite'}")
    monkeypatch.setenv("NLID_JOBS_INLINE", "1")
    monkeypatch.delenv("NLID_AUTH_HEADER", raising=False)
    at = session(monkeypatch=monkeypatch)
    errors = shown(at.error)
    assert any("Saved studies are unavailable: the study database" in e and "cannot be opened" in e
               for e in errors), errors
    ok(at.switch_page("app_pages/data.py").run())
    assert at.selectbox(key=state.DATA_RECORD).value == "seed"
    ok(at.switch_page("app_pages/identify.py").run())
    ok(at.button(key=state.IDENTIFY_RUN).click().run())
    assert at.session_state[state.RUNS][-1].result.success
    assert any("cannot be opened" in e and "The run stays in this session" in e for e in shown(at.error))

    monkeypatch.setenv("NLID_DATABASE_URL", "mysql://db.lab/nlid")
    ok(at.switch_page("app_pages/studies.py").run())
    assert any("must be a SQLite or PostgreSQL URL" in e for e in shown(at.error)), shown(at.error)


# ----------------------------------------------------------------------------- the comparison figure
def test_parameter_figure_draws_values_with_standard_error_bars():
    import math

    from nlid_core.errors import DataValidationError
    from nlid_core.figures.saved_runs import fig_parameter_across_runs

    fig = fig_parameter_across_runs(["a", "<b>x</b>", "a", "d"], [1.0, 2.0, math.nan, 4.0], [0.1, math.nan, 0.3, 0.4],
                                    parameter="k1", unit="N/m")
    (trace,) = fig.data
    assert list(trace.x) == ["a", "&lt;b&gt;x&lt;/b&gt;", "a (2)", "d"]  # escaped; repeated labels kept apart
    assert list(trace.y) == [1.0, 2.0, None, 4.0]
    assert list(trace.error_y.array) == [0.1, 0.0, 0.0, 0.4]  # no bar where the error or the value is unknown
    assert fig.layout.yaxis.title.text == "k1 [N/m]" and fig.layout.title.text == "k1 across runs"
    with pytest.raises(DataValidationError, match="`labels`, `values` and `stderrs`"):
        fig_parameter_across_runs(["a"], [1.0, 2.0], [0.1], parameter="k1")
    with pytest.raises(DataValidationError, match="`labels` is empty"):
        fig_parameter_across_runs([], [], [], parameter="k1")


# --------------------------------------------------------------------------- batch studies

MC_SPEC = """\
kind = "monte_carlo"
study = "coverage"
draws = 20
seed = 5

[model]
terms = ["m0", "c1", "k1", "k3"]
values = { m0 = 1.0, c1 = 0.8, k1 = 1500.0, k3 = 2e5 }

[excitation]
kind = "linear_chirp"
f0_hz = 1.0
f1_hz = 12.0
amplitude_n = 5.0
duration_s = 1.5
fs_hz = 200.0

[measurement]
channels = ["x"]
noise = { x = 1e-5 }

[fit]
method = "two-stage"
"""


def plain_result(i: int) -> dict:  # type: ignore[type-arg]
    """A run result as the Identify page saves it (``result_to_dict``), reduced to what the comparison reads."""
    return {"success": True, "message": "ok", "metrics": {"cost": 1e-3 * (i + 1)},
            "parameters": {"k1": {"value": 1500.0 + i, "stderr": 2.0, "unit": "N/m"},
                           "c1": {"value": 0.8, "stderr": 0.01, "unit": "N·s/m"}}}


@pytest.fixture(scope="module")
def batch_db(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """A database holding ``coverage``: a real 20-draw Monte Carlo batch (serial) and 2 runs saved one by one;
    and ``half done``: the same batch's spec with 25 items of which 20 are stored."""
    from nlid_core.batch import parse_spec, run_batch

    path = tmp_path_factory.mktemp("batchdb") / "studies.sqlite"
    with open_store(f"sqlite:///{path}") as store:
        res = run_batch(store, "local", parse_spec(MC_SPEC, stem="coverage"), serial=True)
        assert res.success and res.monte_carlo is not None
        for i in range(2):
            saved.add_run(store, "local", res.study_id, label=f"hand fit {i}", config={}, result=plain_result(i))
        spec_run, *items = saved.list_runs(store, "local", res.study_id)
        half = saved.create_study(store, "local", "half done")
        cfg = {"batch": {**spec_run.config["batch"], "n_items": 25}}
        saved.add_run(store, "local", half.id, label="batch spec", config=cfg, result=spec_run.result,
                      item_key=spec_run.item_key)
        for r in items:
            if r.item_key is not None:
                saved.add_run(store, "local", half.id, label=r.label, config=r.config, result=r.result,
                              item_key=r.item_key)
    return path


def test_a_monte_carlo_batch_shows_progress_summary_chart_and_csv(batch_db, tmp_path, monkeypatch):
    import shutil

    url = f"sqlite:///{shutil.copy(batch_db, tmp_path / 'studies.sqlite')}"
    monkeypatch.setenv("NLID_DATABASE_URL", url)
    monkeypatch.delenv("NLID_AUTH_HEADER", raising=False)
    monkeypatch.delenv("NLID_LOCAL_USER", raising=False)
    with open_store(url) as store:
        sid = saved.open_study(store, "local", "coverage").id
        half = saved.open_study(store, "local", "half done").id
        expected = study_batches.batch_view(store, "local", sid)
    assert expected is not None and expected.monte_carlo is not None
    at = session(example=False, monkeypatch=monkeypatch)
    ok(at.selectbox(key=state.STUDIES_PICK).set_value(sid).run())
    assert [t.label for t in at.tabs] == ["Records & notes", "Compare runs", "Batch", "Rename, copy, export, delete",
                                          "Sharing"]
    # the individual runs' comparison: the two hand-saved runs only (no batch item, no spec run)
    cmp_table = next(d.value for d in at.dataframe if "parameter" in d.value.columns)
    hand = studies.individual_runs(expected_runs(url, sid))
    assert cmp_table.columns.tolist()[1:] == [f"#{r.id} hand fit {i}" for i, r in enumerate(hand)]
    assert len(hand) == 2 and not at.multiselect
    # progress of the set
    md = " ".join(shown(at.markdown))
    assert "Batch set 1 (Monte Carlo): 20 of 20 items stored, 0 failed." in md.replace("**", "")
    (bar,) = at.get("progress")
    assert bar.proto.value == 100
    assert not any(c.startswith("Unfinished") for c in shown(at.caption))  # finished: no resume command
    assert not [b for b in at.button if b.key == state.STUDIES_BATCH_RESUME]
    assert any("kind = \"monte_carlo\"" in c.value for c in at.code)  # the spec, as toml
    # the summary: a row per free parameter with coverage ± its standard error and the band
    summary = next(d.value for d in at.dataframe if "coverage" in d.value.columns).set_index("parameter")
    assert summary.index.tolist() == ["m0", "c1", "k1", "k3"]
    k1 = next(p for p in expected.monte_carlo.parameters if p.name == "k1")
    assert summary.loc["k1", "unit"] == "N/m" and summary.loc["k1", "draws"] == 20
    assert summary.loc["k1", "truth"] == "1500"
    assert summary.loc["k1", "coverage"] == f"{100 * k1.coverage:.1f} ± {100 * k1.coverage_se:.1f} %"
    assert summary.loc["k1", "95 % band"] == "85.4–100.0 %"  # 0.95 ± 1.96 sqrt(0.95 · 0.05 / 20)
    assert summary.loc["k1", "in band"] == ("yes" if k1.within_band else "no")
    # the chart of one parameter's estimates with the truth marked
    assert at.selectbox(key=state.STUDIES_BATCH_PARAM).options == ["m0", "c1", "k1", "k3"]
    ok(at.selectbox(key=state.STUDIES_BATCH_PARAM).set_value("k3").run())
    import json

    (fig,) = [f for f in at.get("plotly_chart") if f.key == "study_batch_fig"]
    spec = json.loads(fig.proto.spec)
    assert spec["layout"]["title"]["text"] == "k3: estimates of 20 draws"
    assert spec["layout"]["xaxis"]["title"]["text"] == "k3 [N/m^3]"
    assert spec["layout"]["shapes"][0]["x0"] == 2e5  # the truth
    assert len(spec["data"][0]["x"]) == 20
    # the per-item CSV
    assert [d.key for d in at.get("download_button")] == [state.STUDIES_BATCH_CSV, state.STUDIES_EXPORT]
    import pandas as pd

    csv = pd.read_csv(io.BytesIO(study_batches.batch_csv(expected)))
    assert len(csv) == 20 and csv["item"].tolist()[:2] == ["s1|mc=0", "s1|mc=1"]
    assert {"k1", "k1 stderr", "k1 ci low", "k1 ci high", "k1 truth", "k1 covers"} <= set(csv.columns)
    assert csv["k1 covers"].mean() == pytest.approx(k1.coverage)
    assert csv["k1"].mean() == pytest.approx(k1.mean)

    # an unfinished set: its progress and the command that resumes it
    ok(at.selectbox(key=state.STUDIES_PICK).set_value(half).run())
    assert "20 of 25 items stored" in " ".join(shown(at.markdown))
    assert at.get("progress")[0].proto.value == 80
    assert any(c.value == "python -m nlid_core batch SPEC.toml --study 'half done'" for c in at.code)
    assert any("No saved run in this study yet" in c for c in shown(at.caption))  # no individual run to compare


def expected_runs(url: str, sid: int):  # type: ignore[no-untyped-def]
    with open_store(url) as store:
        return saved.list_runs(store, "local", sid)


def test_thirty_plain_runs_compare_the_newest_eight_and_a_chosen_set(db_url, monkeypatch):
    with open_store(db_url) as store:
        study = saved.create_study(store, "local", "many fits")
        ids = [saved.add_run(store, "local", study.id, label=f"fit {i}", config={}, result=plain_result(i)).id
               for i in range(30)]
    at = session(example=False, monkeypatch=monkeypatch)
    assert [t.label for t in at.tabs] == ["Records & notes", "Compare runs", "Rename, copy, export, delete",
                                          "Sharing"]  # no batch: no Batch tab
    pick = at.multiselect(key=state.key_for(state.STUDIES_COMPARE_RUNS, study.id))
    assert pick.value == ids[-8:]
    frame = next(d.value for d in at.dataframe if "parameter" in d.value.columns)
    assert frame.columns.tolist()[1:] == [f"#{i} fit {n}" for n, i in enumerate(ids) if n >= 22]
    ok(pick.set_value([ids[0], ids[5]]).run())
    frame = next(d.value for d in at.dataframe if "parameter" in d.value.columns)
    assert frame.set_index("parameter").loc["k1"].tolist() == ["1500 ± 2", "1505 ± 2"]
    assert len(at.get("plotly_chart")) == 1
    ok(at.multiselect(key=state.key_for(state.STUDIES_COMPARE_RUNS, study.id)).set_value([]).run())
    assert any("Choose the runs to compare" in i for i in shown(at.info))
    assert not any("parameter" in d.value.columns for d in at.dataframe)


def test_monte_carlo_figure_marks_the_truth_and_the_mean():
    import math

    from nlid_core.errors import DataValidationError
    from nlid_core.figures.saved_runs import fig_monte_carlo_estimates

    fig = fig_monte_carlo_estimates([1.0, 2.0, math.nan, 3.0], parameter="k<1>", truth=2.5, unit="N/m")
    hist, truth, mean = fig.data
    assert list(hist.x) == [1.0, 2.0, 3.0]  # NaN left out
    assert [s.x0 for s in fig.layout.shapes] == [2.5, 2.0]
    assert truth.name == "truth 2.5" and mean.name == "mean 2"
    assert fig.layout.xaxis.title.text == "k&lt;1&gt; [N/m]" and fig.layout.yaxis.title.text == "draws"
    assert len(fig_monte_carlo_estimates([1.0], parameter="c1", truth=math.nan).layout.shapes) == 1  # no truth
    with pytest.raises(DataValidationError, match="`values` holds no finite estimate"):
        fig_monte_carlo_estimates([math.nan], parameter="k1", truth=1.0)


def test_a_grid_batch_shows_a_row_per_record_and_variant(db_url, monkeypatch):
    with open_store(db_url) as store:
        study = saved.create_study(store, "local", "grid")
        saved.add_run(store, "local", study.id, label="batch spec", item_key="s1|spec=0123456789abcdef",
                      config={"batch": {"set": 1, "kind": "grid", "n_items": 4, "spec_toml": 'kind = "grid"'}},
                      result={"success": True, "message": "batch set 1: 4 items"})
        for i, (rec, var) in enumerate([("run1", "linear"), ("run1", "cubic"), ("run2", "linear")]):
            key = f"s1|rec={rec}|var={var}"
            result = plain_result(i) if var == "linear" else {"success": False, "message": "did not converge"}
            saved.add_run(store, "local", study.id, label=f"{var} on {rec}", item_key=key, result=result,
                          config={"batch": {"set": 1, "kind": "grid"}, "record": {"name": rec},
                                  "variant": {"label": var}, "item_key": key})
    at = session(example=False, monkeypatch=monkeypatch)
    assert "Batch set 1 (grid): 3 of 4 items stored, 1 failed." in " ".join(shown(at.markdown)).replace("**", "")
    assert at.get("progress")[0].proto.value == 75
    assert any(c.value.startswith("python -m nlid_core batch SPEC.toml --study grid") for c in at.code)
    grid = next(d.value for d in at.dataframe if "variant" in d.value.columns)
    assert grid[["record", "variant", "converged", "k1"]].values.tolist() == [
        ["run1", "cubic", "no", ""], ["run1", "linear", "yes", "1500 ± 2"], ["run2", "linear", "yes", "1502 ± 2"]]
    assert grid["message"].tolist()[0] == "did not converge"
    assert any("No saved run in this study yet" in c for c in shown(at.caption))


def test_a_reopened_study_brings_back_its_runs_roles_and_validations(db_url, monkeypatch):
    """Split, fit, validate on the test part, save; a new session opens the study and finds the records with
    their roles, the run with its model and options, its validation, and the run active; it validates again."""
    from tests.app.test_data_page import with_table

    at = session(monkeypatch=monkeypatch)
    ok(at.switch_page("app_pages/data.py").run())
    with_table(at, "seed", "rows", [("train", 0, 4000), ("test", 4000, 6000)])
    ok(at.button(key=state.DATA_SPLIT).click().run())
    ok(at.switch_page("app_pages/identify.py").run())
    ok(at.button(key=state.IDENTIFY_RUN).click().run())
    run = at.session_state[state.RUNS][-1]
    assert run.result.success and run.config.fit_records == ("train",)
    ok(at.switch_page("app_pages/validate.py").run())
    assert at.selectbox(key=state.VALIDATE_RECORD).value == "test"
    first = at.session_state[state.VALIDATIONS][(run.id, "test", 50)]
    ok(at.switch_page("app_pages/studies.py").run())
    create(at, "rig")

    other = session(example=False, monkeypatch=monkeypatch)
    other.selectbox(key=state.STUDIES_PICK).set_value(at.session_state[state.OPEN_STUDY].id).run()
    ok(other.button(key=state.STUDIES_OPEN).click().run())
    assert any("Brought back 1 run" in s for s in shown(other.success)), shown(other.success) + shown(other.warning)
    assert other.session_state[state.ROLES] == {"train": "fit", "test": "test"}
    (back,) = other.session_state[state.RUNS]
    assert other.session_state[state.ACTIVE_RUN] == back.id and back.config.fit_records == ("train",)
    assert back.config.terms == run.config.terms and back.config.options == run.config.options
    for e in run.result.estimates:  # estimated again from the saved optimum: the same estimates and intervals
        got = back.result.estimate(e.name)
        assert got.value == pytest.approx(e.value, rel=1e-6, abs=1e-3 * e.stderr), e.name
        assert got.stderr == pytest.approx(e.stderr, rel=1e-3), e.name
    kept = other.session_state[state.VALIDATIONS][(back.id, "test", 50)]
    assert kept.metric("x").rmse == pytest.approx(first.metric("x").rmse, rel=1e-5)
    ok(other.switch_page("app_pages/validate.py").run())
    assert other.selectbox(key=state.VALIDATE_RECORD).value == "test" and not other.warning, shown(other.warning)
    ok(other.switch_page("app_pages/studies.py").run())
    compared = next(d.value for d in other.dataframe if "parameter" in d.value.columns).set_index("parameter")
    assert compared.loc["validation RMSE (test: x)"].iloc[0].endswith(("µm", "mm"))


def test_a_reopened_loop_fit_says_it_is_no_longer_the_loop_fit():
    """A study keeps a run's configuration and records, not a position loop and its reference: a run fitted
    inside a loop comes back as open-loop output error from its saved estimates, and says so."""
    from app_support import run_docs
    from nlid_core.estimate import FitOptions
    from nlid_core.examples import SEED_TRUTH, make_example
    from nlid_core.models import TermModel

    rec = make_example(overrides={"duration_s": 2.0})
    model = TermModel(("m0", "c1", "k1", "k3"))
    params = model.default_parameters()
    cfg = state.ModelConfig(terms=model.terms, settings=model.settings, params=params,
                            options=FitOptions(method="two-stage"), fit_records=(rec.name,))
    saved_values = {n: {"value": SEED_TRUTH[n]} for n in model.terms}
    fit = run_docs.restore_fit(cfg, {"success": True, "method": "closed-loop", "parameters": saved_values},
                               {rec.name: rec})
    assert fit.method == "output-error" and "not the loop fit" in fit.warnings[-1]
