"""Every hostile file of the catalogue, uploaded on the Data page: one escaped error line for that file,
no exception, the session's earlier records kept, and the next good file still loads."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_support import state
from tests import hostile_files as hf
from tests.crash_files import mat_reader_crash

REPO = Path(__file__).resolve().parents[2]
FAULTS = REPO / "tests" / "fault_injection"
MIME = {".csv": "text/csv", ".txt": "text/plain", ".tsv": "text/tab-separated-values", ".mat": "application/octet-stream",
        ".parquet": "application/octet-stream", ".xlsx": "application/vnd.ms-excel"}


def _good_csv() -> bytes:
    t = np.arange(400) / 100.0
    return pd.DataFrame({"t": t, "f": np.sin(2 * np.pi * t), "x": 1e-3 * np.sin(2 * np.pi * t - 0.3)}
                        ).to_csv(index=False).encode()


@pytest.fixture(scope="module")
def session() -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=90)
    at.run()
    at.switch_page("app_pages/data.py").run()
    at.file_uploader(key="upload").set_value([("earlier.csv", _good_csv(), "text/csv")]).run()
    at.button(key="load_upload").click().run()
    assert not at.exception and list(at.session_state[state.RECORDS]) == ["earlier"]
    return at


CASES = [make for make in hf.HOSTILE] + [mat_reader_crash]


@pytest.mark.parametrize("make", CASES, ids=lambda f: f.__name__)
def test_hostile_upload_is_one_error_for_that_file(session, make, tmp_path, monkeypatch):
    if make is mat_reader_crash:  # a reader with a native bug: the worker dies, the server does not
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(FAULTS), os.environ.get("PYTHONPATH")])))
        monkeypatch.setenv("NLID_TEST_UNGUARDED_MAT", "1")
    path = make(tmp_path)
    at = session
    at.file_uploader(key="upload").set_value([(path.name, path.read_bytes(), MIME[path.suffix])]).run()
    start = time.monotonic()
    at.button(key="load_upload").click().run()
    assert time.monotonic() - start < 30
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    assert path.stem.replace("_", r"\_") in errors[0] and "\n" not in errors[0], errors[0]
    if make is mat_reader_crash:
        assert "crashed" in errors[0]
    assert list(at.session_state[state.RECORDS]) == ["earlier"]


def test_the_session_still_loads_a_good_file_afterwards(session):
    at = session
    at.file_uploader(key="upload").set_value([("later.csv", _good_csv(), "text/csv")]).run()
    at.button(key="load_upload").click().run()
    assert not at.exception and not at.error
    assert list(at.session_state[state.RECORDS]) == ["earlier", "later"]
