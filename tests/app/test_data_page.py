"""The Data page as a test engineer uses it: split one record into named records, rename, form values kept,
errors that name the page's fields, exact sampling rates (AppTest, no browser)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_support import state
from app_support.cache import uploads
from nlid_core.load_options import LOAD_OPTIONS

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 90
FS = 610.3515625


def data_page(example: bool = True) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.run()
    if example:
        at.button(key="load_example").click().run()
    at.switch_page("app_pages/data.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def with_table(at: AppTest, record: str, by: str, rows: list[tuple[str, float | None, float | None]]) -> AppTest:
    """Fill the split table of ``record`` as the user would have (the editor starts from the kept table)."""
    key = state.key_for(state.DATA_SPLIT_TABLE, record, by)
    frame = pd.DataFrame({"name": [r[0] for r in rows], "from": [r[1] for r in rows], "to": [r[2] for r in rows]})
    at.radio(key=state.DATA_SPLIT_BY).set_value(by).run()
    at.session_state[state.EDITOR_TABLES] = {key: {"latest": frame}}
    at.switch_page("app_pages/home.py").run()  # a new visit of the page starts the editor from that table
    at.switch_page("app_pages/data.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown(elements) -> list[str]:  # type: ignore[no-untyped-def]
    """The texts of message elements as the user reads them (markdown escapes removed)."""
    return [e.value.replace("\\", "") for e in elements]


def sidebar(at: AppTest) -> str:
    return " ".join(shown(at.sidebar.markdown)).replace("**", "")


def no_time_csv(n: int = 400) -> bytes:
    k = np.arange(n)
    return pd.DataFrame({"V1": np.sin(k / 9.0), "V2": 0.1 * np.sin(k / 9.0 - 0.3)}).to_csv(index=False).encode()


def test_split_by_rows_makes_named_records_that_keep_their_time_and_show_in_the_sidebar_at_once():
    at = with_table(data_page(), "seed", "rows", [("train", 0, 4000), ("test", 4000, 6000)])
    at.button(key=state.DATA_SPLIT).click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    recs = at.session_state[state.RECORDS]
    assert list(recs) == ["seed", "train", "test"]
    assert (recs["train"].n, recs["test"].n) == (4000, 2000)
    assert recs["test"].t[0] == recs["seed"].t[4000]  # original time stamps
    assert recs["test"].units == recs["seed"].units and recs["test"].fs == pytest.approx(500.0)
    assert "train (fit): 4,000 samples" in sidebar(at) and "test (test): 2,000" in sidebar(at)
    assert any("Created train (4,000 samples), test (2,000 samples)" in s for s in shown(at.success))
    # fitting now defaults to the fit part, validation to the test part; the whole record is not held out
    assert at.session_state[state.CONFIG].fit_records == ("train",)
    assert any("now fits train; Validate checks the model on test" in s for s in shown(at.info))
    at.switch_page("app_pages/model.py").run()
    assert at.multiselect(key=state.MODEL_FIT_RECORDS).value == ["train"] and not at.warning
    at.switch_page("app_pages/identify.py").run()
    at.button(key="run_identification").click().run()
    at.switch_page("app_pages/validate.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key=state.VALIDATE_RECORD).value == "test"
    assert not any("Not a validation" in w for w in shown(at.warning))
    at.selectbox(key=state.VALIDATE_RECORD).set_value("seed").run()  # holds the fitted samples
    assert any("Not a validation" in w and "shares samples with the fitted train" in w for w in shown(at.warning))


def test_split_by_time_and_overlaps_are_named():
    at = with_table(data_page(), "seed", "time", [("early", 0.0, 6.0), ("late", 5.0, None)])
    at.button(key=state.DATA_SPLIT).click().run()
    assert not at.exception and not at.error
    recs = at.session_state[state.RECORDS]
    assert (recs["early"].n, recs["late"].n) == (3000, 3500)  # 500 Hz: 0 <= t < 6 s, 5 s to the end
    assert any("early and late share rows 2500:3000" in w for w in shown(at.warning))


@pytest.mark.parametrize("rows, message", [
    ([("train", 0, 3000), ("test", 5000, 4000)], "Row 2 of the table (test): stop"),
    ([("train", 0, 3000), ("test", 3000, 9000)], "Row 2 of the table (test): stop row 9000 is outside"),
    ([("train", 0, 3000), ("", 3000, 6000)], "Row 2 of the table: give the part a name"),
    ([("train", 0, 3000), ("train", 3000, 6000)], "Row 2 of the table (train): segment 1 has the same name"),
    ([("seed", 0, 3000)], "already a record named"),
])
def test_bad_segments_name_the_row_of_the_table_and_create_nothing(rows, message):
    at = with_table(data_page(), "seed", "rows", rows)
    at.button(key=state.DATA_SPLIT).click().run()
    assert not at.exception
    errors = shown(at.error)
    assert len(errors) == 1 and message in errors[0], errors
    assert list(at.session_state[state.RECORDS]) == ["seed"]


def test_rename_follows_everywhere_and_refuses_duplicates_and_records_of_runs():
    at = with_table(data_page(), "seed", "rows", [("test", 3000, 6000)])
    at.text_input(key=state.key_for(state.DATA_RENAME_TO, "seed")).set_value("  rig run 3 ").run()
    at.button(key=state.DATA_RENAME).click().run()
    assert not at.exception and not at.error
    assert list(at.session_state[state.RECORDS]) == ["rig run 3"]
    assert at.session_state[state.RECORDS]["rig run 3"].name == "rig run 3"
    assert at.session_state[state.CONFIG].fit_records == ("rig run 3",)
    assert at.selectbox(key=state.DATA_RECORD).value == "rig run 3"
    assert "rig run 3" in sidebar(at) and "seed" not in sidebar(at)
    at.button(key=state.DATA_SPLIT).click().run()  # the split table followed the rename
    assert list(at.session_state[state.RECORDS]) == ["rig run 3", "test"]
    # a name that is taken, an empty name, and a record a validation used
    for new, message in (("test", "already a record named"), ("   ", "needs a name")):
        at.text_input(key=state.key_for(state.DATA_RENAME_TO, "rig run 3")).set_value(new).run()
        at.button(key=state.DATA_RENAME).click().run()
        assert any(message in e for e in shown(at.error)), shown(at.error)
    at.session_state[state.VALIDATIONS] = {(1, "rig run 3", 50): None}
    at.text_input(key=state.key_for(state.DATA_RENAME_TO, "rig run 3")).set_value("other").run()
    at.button(key=state.DATA_RENAME).click().run()
    assert any("cannot be renamed" in e and "validation of run #1" in e for e in shown(at.error))
    assert list(at.session_state[state.RECORDS]) == ["rig run 3", "test"]


def test_form_values_survive_leaving_the_page():
    at = data_page(example=False)
    values = {state.DATA_COLUMNS: "f=V1,x=V2", state.DATA_UNITS: "f=V,x=V", state.DATA_FS: "610.3515625",
              state.DATA_ROWS: "40650:105712"}
    for key, value in values.items():
        at.text_input(key=key).set_value(value).run()
    at.checkbox(key=state.DATA_RESAMPLE).check().run()
    at.switch_page("app_pages/model.py").run()
    at.switch_page("app_pages/data.py").run()
    assert not at.exception
    assert {k: at.text_input(key=k).value for k in values} == values
    assert at.checkbox(key=state.DATA_RESAMPLE).value is True


def test_an_exact_sampling_rate_and_errors_that_name_the_fields():
    at = data_page(example=False)
    at.file_uploader(key=state.DATA_UPLOAD).set_value([("rig.csv", no_time_csv(), "text/csv")]).run()
    at.button(key=state.DATA_LOAD_UPLOAD).click().run()
    (error,) = shown(at.error)
    assert "'Column mapping' t=NAME" in error and "'Sampling rate [Hz]'" in error and "--" not in error
    assert "no 't' (time) column" in error and "`" not in error
    at.text_input(key=state.DATA_COLUMNS).set_value("f=V1,x=V2").run()
    for text, message in (("abc", "'Sampling rate [Hz]': 'abc' is not a number"),
                          ("0", "'Sampling rate [Hz]' must be between")):
        at.text_input(key=state.DATA_FS).set_value(text).run()
        at.button(key=state.DATA_LOAD_UPLOAD).click().run()
        assert any(message in e for e in shown(at.error)), shown(at.error)
    at.text_input(key=state.DATA_FS).set_value(str(FS)).run()
    at.text_input(key=state.DATA_ROWS).set_value("500:600").run()
    at.button(key=state.DATA_LOAD_UPLOAD).click().run()
    assert any("'Rows to keep' 500:400 selects nothing" in e for e in shown(at.error)), shown(at.error)
    at.text_input(key=state.DATA_ROWS).set_value("").run()
    at.button(key=state.DATA_LOAD_UPLOAD).click().run()
    assert not at.exception and not at.error
    rec = at.session_state[state.RECORDS]["rig"]
    assert rec.fs == pytest.approx(FS, rel=1e-12)
    assert any("610.3515625 Hz" in m for m in shown(at.markdown))  # the summary line
    assert "610.3515625 Hz" in sidebar(at)


def test_every_loading_option_has_a_name_on_the_page():
    assert set(uploads.FIELD_LABELS) == set(LOAD_OPTIONS) == set(uploads._PAGE_NAMES)


def test_the_seed_example_is_sampled_at_500_hz():
    at = data_page()
    assert any(" at 500 Hz" in m for m in shown(at.markdown))
    assert "6,000 samples, 500 Hz" in sidebar(at)
