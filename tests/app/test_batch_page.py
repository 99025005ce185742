"""Running a Monte Carlo batch from the Studies page (AppTest): the spec box, the run into a study, the
Batch tab's summary, resuming an unfinished batch with *Resume here*, and specs that name files or grids
refused before anything runs or is stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_support import state, studies
from nlid_core.batch.run import run_batch
from nlid_core.batch.spec import parse_spec
from nlid_core.errors import SimulationError
from nlid_core.store import studies as saved
from nlid_core.store.db import open_store

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 120
STUDY = "chirp design, coverage"


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def studies_page() -> AppTest:
    at = ok(AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run())
    return ok(at.switch_page("app_pages/studies.py").run())


def spec(draws: int) -> str:
    text = studies.MC_SPEC_EXAMPLE
    assert "draws = 200" in text
    return text.replace("draws = 200", f"draws = {draws}")


def counts(url: str) -> dict[str, int]:
    with open_store(url) as s:
        return {st.name: len(saved.list_runs(s, "local", st.id)) for st in saved.list_studies(s, "local")}


def test_the_example_spec_is_valid_and_runs_from_the_page_into_a_study(db_url):
    parse_spec(studies.MC_SPEC_EXAMPLE, files=False)  # what the box starts with is a runnable spec
    at = studies_page()
    assert at.text_area(key=state.STUDIES_BATCH_SPEC).value == studies.MC_SPEC_EXAMPLE
    at.text_area(key=state.STUDIES_BATCH_SPEC).set_value(spec(12))
    ok(at.button(key=state.STUDIES_BATCH_RUN).click().run())
    done = " ".join(s.value for s in at.success)
    assert "12 draw(s) computed" in done and "Coverage of the intervals" in done, done
    assert counts(db_url) == {STUDY: 13}  # the spec run and 12 draws
    # the new study is the one picked, with its Batch tab: the summary table and the estimates
    assert at.selectbox(key=state.STUDIES_PICK).value is not None
    assert "Batch" in [t.label for t in at.tabs]
    text = " ".join(m.value for m in at.markdown)
    assert "12 of 12 items stored" in text, text
    summary = next(d.value for d in at.dataframe if "coverage" in " ".join(map(str, d.value.columns)).lower())
    assert len(summary) == 4  # m0, c1, k1, k3
    # the same spec again: nothing to compute, nothing added
    ok(at.button(key=state.STUDIES_BATCH_RUN).click().run())
    assert "0 draw(s) computed" in " ".join(s.value for s in at.success)
    assert counts(db_url) == {STUDY: 13}


@pytest.mark.parametrize(("text", "says"), [
    ('kind = "grid"\n[records]\nfiles = ["/etc/*"]\n[[variant]]\nlabel = "a"\nterms = ["k1"]\n',
     "a grid reads record files on the server"),
    (studies.MC_SPEC_EXAMPLE.split("[excitation]")[0] + '[excitation]\nfile = "/etc/passwd"\n'
     + "[measurement]" + studies.MC_SPEC_EXAMPLE.split("[measurement]")[1], "reads no files on the server"),
    ('kind = "monte_carlo"\ndraws = 1000000\n', "draws"),
    ("kind = = 1", "not valid TOML"),
])
def test_specs_that_name_files_or_break_rules_are_refused_and_nothing_is_stored(db_url, text, says):
    at = studies_page()
    at.text_area(key=state.STUDIES_BATCH_SPEC).set_value(text)
    ok(at.button(key=state.STUDIES_BATCH_RUN).click().run())
    errors = " ".join(e.value for e in at.error)
    assert "The batch did not run" in errors and says in errors, errors
    assert counts(db_url) == {}


def test_an_unfinished_batch_resumes_from_its_batch_tab(db_url):
    calls = {"n": 0}

    def stop_after_five(_progress) -> None:  # type: ignore[no-untyped-def]
        calls["n"] += 1

    with open_store(db_url) as s:
        with pytest.raises(SimulationError, match="cancel"):
            run_batch(s, "local", parse_spec(spec(10), files=False), serial=True, progress=stop_after_five,
                      cancel=lambda: calls["n"] > 5)
    stored = counts(db_url)[STUDY]
    assert 2 <= stored < 11
    at = studies_page()
    text = " ".join(m.value for m in at.markdown)
    assert f"{stored - 1} of 10 items stored" in text, text
    ok(at.button(key=state.STUDIES_BATCH_RESUME).click().run())
    assert counts(db_url) == {STUDY: 11}
    text = " ".join(m.value for m in at.markdown)
    assert "10 of 10 items stored" in text, text
    assert not [b for b in at.button if b.key == state.STUDIES_BATCH_RESUME]  # finished: nothing to resume
    posted = " ".join(s.value for s in at.success)
    assert f"{11 - stored} draw(s) computed" in posted and f"{stored - 1} already stored" in posted, posted


def test_an_uploaded_spec_file_fills_the_box_and_a_binary_one_is_refused(db_url):
    at = studies_page()
    at.file_uploader(key=state.STUDIES_BATCH_UPLOAD).set_value(("mine.toml", spec(3).encode(), "application/toml"))
    ok(at.run())
    assert at.text_area(key=state.STUDIES_BATCH_SPEC).value == spec(3)
    at.file_uploader(key=state.STUDIES_BATCH_UPLOAD).set_value(("bin.toml", b"\xff\xfe\x00 binary", "application/toml"))
    ok(at.run())
    assert "is not UTF-8 text" in " ".join(e.value for e in at.error)
    assert at.text_area(key=state.STUDIES_BATCH_SPEC).value == spec(3)  # unchanged
    ok(at.button(key=state.STUDIES_BATCH_RUN).click().run())
    assert counts(db_url) == {STUDY: 4}
