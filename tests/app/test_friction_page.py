"""AppTest of the Friction & hysteresis page: loads, simulates and identifies a short axis, refuses bad uploads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_support import state

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 180


def friction_page() -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/friction.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_page_loads_and_says_what_to_do():
    at = friction_page()
    assert at.title[0].value == "Friction & hysteresis"
    assert any("Simulate an axis" in i.value for i in at.info)


@pytest.fixture(scope="module")
def identified() -> AppTest:
    at = friction_page()
    at.number_input(key=state.FRICTION_DWELL).set_value(0.3)
    at.number_input(key=state.FRICTION_PRE_DURATION).set_value(0.5)  # short records: a fast test
    at.button(key=state.FRICTION_SIMULATE).click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.button(key=state.FRICTION_IDENTIFY).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_simulated_axis_is_identified_and_shown(identified):
    at = identified
    assert not at.error, [e.value for e in at.error]
    result = at.session_state[state.FRICTION]["result"]
    assert result.success
    assert result.estimate("Fc").value == pytest.approx(1.0, rel=0.05)  # the default truth
    frames = {tuple(d.value.columns[:2]): d.value for d in at.dataframe}
    params = frames[("parameter", "value")]
    assert params["parameter"].tolist() == ["m0", "sigma0", "sigma1", "sigma2", "Fc", "Fs", "vs"]
    stages = frames[("stage", "records")]
    assert stages["stage"].tolist() == ["steady-state curve", "pre-sliding"]
    assert any("Dynamic model needed" in m.value for m in at.markdown)
    assert any(b.label.startswith("Download the result") for b in at.get("download_button"))


def test_a_staircase_file_without_velocity_is_refused_with_a_message():
    at = friction_page()
    at.radio(key=state.FRICTION_SOURCE).set_value("upload files").run()
    t = np.arange(200) / 100.0
    data = pd.DataFrame({"t": t, "f": np.sin(t), "x": 1e-3 * np.cos(t)}).to_csv(index=False).encode()
    at.file_uploader(key=state.FRICTION_UPLOAD_STEADY).set_value(("stairs.csv", data, "text/csv"))
    at.file_uploader(key=state.FRICTION_UPLOAD_PRE).set_value(("pre.csv", data, "text/csv")).run()
    at.button(key=state.FRICTION_LOAD_UPLOADS).click().run()
    assert not at.exception, [e.value for e in at.exception]
    (err,) = [e.value for e in at.error]
    assert "no measured velocity" in err and "stairs" in err
    assert state.FRICTION not in at.session_state or "steady" not in at.session_state[state.FRICTION]
