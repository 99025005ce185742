"""The shared dashboard process stays safe and bounded: escaped user text, isolated uploads, capped memory."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app_support import state
from app_support.cache import ByteBudgetCache, nbytes_of, upload_extension, upload_record_name
from nlid_core.errors import DataValidationError
from nlid_core.estimate import FitOptions, identify
from nlid_core.examples import make_example
from nlid_core.models import TermModel

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 90
IMAGE_NAME = "![x](http://host/p.png).csv"


def csv_bytes(n: int = 400, amp: float = 1.0) -> bytes:
    t = np.arange(n) / 100.0
    return pd.DataFrame({"t": t, "f": amp * np.sin(2 * np.pi * t), "x": 1e-3 * amp * np.sin(2 * np.pi * t - 0.3)}
                        ).to_csv(index=False).encode()


def data_page() -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/data.py").run()
    assert not at.exception
    return at


def upload(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    at.file_uploader(key="upload").set_value([(name, data, "text/csv") for name, data in files]).run()
    at.button(key="load_upload").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


# --------------------------------------------------------------------------- escaping and uploads
def test_markdown_in_a_file_name_is_rendered_escaped():
    at = upload(data_page(), (IMAGE_NAME, csv_bytes()))
    assert list(at.session_state[state.RECORDS]) == ["![x](http://host/p.png)"]
    success = " ".join(s.value for s in at.success)
    assert not any("![" in b.label.replace(r"\!\[", "") for b in at.button)  # "Remove ..."
    # the sidebar (app.py's own elements, drawn around every page; one more run shows the new record)
    at.run()
    assert not at.exception
    sidebar = " ".join(m.value for m in at.sidebar.markdown)
    for text in (success, sidebar):
        assert r"\!\[" in text
        assert "![" not in text.replace(r"\!\[", "")


def test_a_300_character_file_name_loads():
    long_name = "a" * 300 + ".csv"
    at = upload(data_page(), (long_name, csv_bytes()))
    assert not at.error, [e.value for e in at.error]
    (name,) = at.session_state[state.RECORDS]
    assert name.startswith("aaa") and len(name) <= 80


def test_a_failing_upload_names_the_file_and_keeps_earlier_records():
    at = upload(data_page(), ("good.csv", csv_bytes()))
    upload(at, ("bad_*name*.csv", b"t,f,x\n0,1\nabc,2,3\n"), ("worse.mat", b"not a MATLAB file at all"))
    assert list(at.session_state[state.RECORDS]) == ["good"]
    errors = [e.value for e in at.error]
    assert len(errors) == 2
    assert r"bad\_\*name\*" in errors[0] and "\n" not in errors[0]
    assert "upload.csv" not in errors[0]  # the temporary file's name never shows
    assert "worse" in errors[1] and "\n" not in errors[1]


def test_upload_names_and_extensions():
    assert upload_record_name("rig run 3.CSV") == "rig run 3"
    assert upload_record_name("line\nbreak.csv") == "line break"
    assert upload_record_name(".csv") == "upload"
    assert upload_record_name("archive.tar.gz") == "archive.tar.gz"
    assert upload_extension("data.XLSX") == ".xlsx"
    with pytest.raises(DataValidationError, match="unsupported file type"):
        upload_extension("evil.py")
    with pytest.raises(DataValidationError, match="no extension"):
        upload_extension("noext")


def test_the_record_limit_per_session(monkeypatch):
    monkeypatch.setenv("NLID_MAX_RECORDS", "2")
    at = upload(data_page(), ("one.csv", csv_bytes()), ("two.csv", csv_bytes(amp=2)), ("three.csv", csv_bytes(amp=3)))
    assert list(at.session_state[state.RECORDS]) == ["one", "two"]
    assert any("NLID_MAX_RECORDS" not in e.value and "remove a record" in e.value for e in at.error)


# --------------------------------------------------------------------------- run history
@pytest.fixture(scope="module")
def seed_fit():
    rec = make_example("seed")
    cfg = _config(rec)
    return rec, cfg, identify(rec, cfg.model, params=cfg.params, options=cfg.options)


def _config(rec):
    model = TermModel(("m0", "m1", "c1", "c2", "k1", "k3"))
    return state.ModelConfig(terms=model.terms, settings=model.settings, params=model.default_parameters(),
                             options=FitOptions(), fit_records=(rec.name,))


def test_add_run_keeps_the_newest_runs_in_full(monkeypatch, seed_fit):
    _, cfg, fit = seed_fit
    monkeypatch.setattr(state.st, "session_state", {})
    monkeypatch.setenv("NLID_MAX_RUNS_KEPT", "2")
    for _ in range(5):
        state.add_run(cfg, fit, 1.0)
    kept = state.runs()
    assert [r.detailed for r in kept] == [False, False, False, True, True]
    assert all(r.result.records == () for r in kept[:3]) and all(r.result.records for r in kept[3:])
    assert all(r.result.estimates == fit.estimates and r.config == cfg for r in kept)
    assert nbytes_of(kept[0]) < nbytes_of(fit) / 20
    # the newest successful run keeps its detail after failed runs (Identify makes it active again)
    failed = dataclasses.replace(fit, success=False, message="diverged", records=())
    state.add_run(cfg, failed, 1.0)
    state.add_run(cfg, failed, 1.0)
    assert [r.detailed for r in state.runs()] == [False, False, False, False, True, True, True]
    # validations are capped too, oldest first
    monkeypatch.setenv("NLID_MAX_VALIDATIONS", "3")
    for k in range(5):
        state.add_validation((k, "seed", 50), object())  # type: ignore[arg-type]
    assert list(state.validations()) == [(k, "seed", 50) for k in (2, 3, 4)]


def test_pages_render_a_summarised_run(seed_fit):
    _, cfg, fit = seed_fit
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.button(key="load_example").click().run()
    detailed = state.Run(id=1, label="#1 first", created="00:00:00", config=cfg, result=fit, elapsed_s=1.0)
    at.session_state[state.RUNS] = [state.summarise(detailed), dataclasses.replace(detailed, id=2, label="#2")]
    at.session_state[state.ACTIVE_RUN] = 1
    for page in ("identify", "nonlinearity", "validate", "export"):
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
    at.switch_page("app_pages/validate.py").run()
    assert any(state.DROPPED in i.value.replace("\\", "") for i in at.info)
    assert at.dataframe  # the validation itself still runs from the kept parameters
    at.switch_page("app_pages/export.py").run()
    assert any(state.DROPPED in i.value.replace("\\", "") for i in at.info)
    at.button(key="build_report").click().run()
    assert not at.exception
    assert "<html" in at.session_state[state.REPORT_HTML][1]


# --------------------------------------------------------------------------- the byte-bounded cache
class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_byte_budget_cache_evicts_least_recently_used_by_bytes(monkeypatch):
    mb = 2**20
    monkeypatch.setattr("app_support.cache.budget.TRIM_AFTER_BYTES", 2 * mb)
    released = []
    cache = ByteBudgetCache(3 * mb, sizeof=nbytes_of, release=lambda: released.append(cache.stats().nbytes))
    arrays = {k: np.zeros(mb // 8) for k in "abcd"}  # 1 MB each
    for k in "abc":
        assert cache.put(k, arrays[k])
    assert len(cache) == 3 and cache.stats().nbytes == 3 * mb
    assert cache.get("a") is arrays["a"]  # a is now the most recently used
    cache.put("d", arrays["d"])
    assert "b" not in cache and all(k in cache for k in "acd")
    assert cache.stats().nbytes <= 3 * mb
    # one big value replaces several small ones; a value above the budget is not stored
    assert cache.put("big", np.zeros(2 * mb // 8))
    assert cache.stats().nbytes <= 3 * mb and "big" in cache and len(cache) == 2
    assert not cache.put("huge", np.zeros(4 * mb // 8)) and "huge" not in cache
    assert len(released) == 1  # once 2 MB were dropped (b, then c)


def test_byte_budget_cache_sizes_records_and_expires_unused_entries():
    rec = make_example("seed")
    channels = [getattr(rec, c) for c in ("t", "f", "x", "v", "a")]
    assert nbytes_of(rec) == sum(arr.nbytes for arr in channels if arr is not None)
    clock = Clock()
    cache = ByteBudgetCache(10 * 2**20, ttl_s=60, clock=clock)
    calls = []
    value = cache.get_or_compute("seed", lambda: calls.append(1) or rec)
    assert value is rec and cache.get_or_compute("seed", lambda: calls.append(1) or rec) is rec and len(calls) == 1
    clock.t = 59
    assert cache.get("seed") is rec  # used again: its time-to-live starts over
    clock.t = 59 + 61
    assert cache.get("seed") is None and len(cache) == 0 and cache.stats().nbytes == 0
    with pytest.raises(ZeroDivisionError):
        cache.get_or_compute("bad", lambda: 1 / 0)
    assert "bad" not in cache


# --------------------------------------------------------------------------- caps on what a session keeps
def test_runs_beyond_the_history_limit_are_dropped_oldest_first(monkeypatch, seed_fit):
    _, cfg, fit = seed_fit
    monkeypatch.setattr(state.st, "session_state", {})
    monkeypatch.setenv("NLID_MAX_RUNS", "3")
    monkeypatch.setenv("NLID_MAX_RUNS_KEPT", "1")
    failed = dataclasses.replace(fit, success=False, message="diverged", records=())
    state.add_run(cfg, fit, 1.0)  # the newest successful run: never dropped
    for _ in range(4):
        state.add_run(cfg, failed, 1.0)
    assert [r.id for r in state.runs()] == [1, 4, 5]
    state.set_active_run(4)
    state.add_run(cfg, failed, 1.0)  # run 6 becomes active; 4 is no longer spared
    assert [r.id for r in state.runs()] == [1, 5, 6]
    assert state.active_run().id == 6


def test_studies_and_designs_are_capped_oldest_first(monkeypatch, seed_fit):
    _, cfg, fit = seed_fit
    monkeypatch.setattr(state.st, "session_state", {})
    state.add_run(cfg, fit, 1.0)
    for k in range(state.MAX_STUDIES + 3):
        state.add_study((1, "profile", k), k)
    assert list(state.studies()) == [(1, "profile", k) for k in range(3, state.MAX_STUDIES + 3)]
    state.add_study((1, "profile", 3), "again")  # a recomputed study becomes the newest
    assert list(state.studies())[-1] == (1, "profile", 3) and len(state.studies()) == state.MAX_STUDIES
    for k in range(state.MAX_DESIGNS + 2):
        state.add_design(f"design {k}", k)
    state.add_design("design 5", "duplicate label: not added")
    assert [d[0] for d in state.designs()] == [f"design {k}" for k in range(2, state.MAX_DESIGNS + 2)]
    assert dict(state.designs())["design 5"] == 5


# --------------------------------------------------------------------------- session-state keys live in state.py
#: Display elements whose ``key`` is only an identity: Streamlit keeps no session state for them
#: (unless they take selections, ``on_select``). ``show`` is ``app_support.tables.show`` (a dataframe).
DISPLAY_ELEMENTS = frozenset({"plotly_chart", "dataframe", "container", "show"})
STATE_MODULE = REPO / "app_support" / "state.py"
#: The session state's accessors: ``state`` and the widget memory it re-exports (the only modules that touch it).
STATE_MODULES = (STATE_MODULE, REPO / "app_support" / "widgets.py")
#: Where the keys are defined (``state`` re-exports them).
KEYS_MODULE = REPO / "app_support" / "keys.py"


def _app_files() -> list[Path]:
    files = [REPO / "app.py", *sorted((REPO / "app_pages").glob("*.py")), *sorted((REPO / "app_support").rglob("*.py"))]
    return [p for p in files if p not in STATE_MODULES and "__pycache__" not in p.parts]


def _is_literal_key(node: ast.expr) -> bool:
    """A string literal, or an f-string that starts with literal text (``f"{key}_cancel"`` derives from a given key)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, ast.JoinedStr) and bool(node.values) and isinstance(node.values[0], ast.Constant)


def literal_state_keys(source: str) -> list[str]:
    """Lines of ``source`` that touch ``st.session_state`` or pass a literal widget ``key``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Attribute, ast.Name)) and (getattr(node, "attr", None) or getattr(node, "id", None)) \
                == "session_state":
            found.append(f"line {node.lineno}: uses session_state (only app_support/state.py and widgets.py may)")
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            kwargs = {kw.arg: kw.value for kw in node.keywords}
            if "key" in kwargs and _is_literal_key(kwargs["key"]):
                if name in DISPLAY_ELEMENTS and "on_select" not in kwargs:
                    continue
                found.append(f"line {node.lineno}: {name}(key={ast.unparse(kwargs['key'])})")
    return sorted(found, key=lambda f: int(f.split(":")[0].split()[1]))


def test_the_key_rule_detects_literal_keys():
    source = (
        "import streamlit as st\n"
        "st.button('Go', key='go')\n"
        "st.number_input('w', key=f'weight_{c}')\n"
        "st.session_state['x'] = 1\n"
        "st.session_state.pop(k, None)\n"
        "st.plotly_chart(fig, key='fig')\n"
        "st.dataframe(df, key='picked', on_select='rerun')\n"
        "st.button('Cancel', key=f'{key}_cancel')\n"
        "st.button('Go', key=state.DATA_UPLOAD)\n"
        "st.toggle('t', key=state.key_for(state.MODEL_WEIGHT, c))\n"
    )
    assert [f.split(":")[0] for f in literal_state_keys(source)] == ["line 2", "line 3", "line 4", "line 5", "line 7"]


@pytest.mark.parametrize("path", _app_files(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_pages_and_support_modules_use_only_keys_of_state_py(path):
    found = literal_state_keys(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(REPO)}: define these keys in app_support/keys.py: {found}"


def test_the_keys_of_the_session_are_distinct():
    keys: dict[str, str] = {}
    nodes = [n for module in (STATE_MODULE, KEYS_MODULE) for n in ast.parse(module.read_text(encoding="utf-8")).body]
    for node in nodes:
        target, value = (node.targets[0], node.value) if isinstance(node, ast.Assign) else (
            (node.target, node.value) if isinstance(node, ast.AnnAssign) else (None, None))
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant) and isinstance(value.value, str) \
                and re.fullmatch(r"[a-z][a-z0-9_]*", value.value):
            assert value.value not in keys, f"{target.id} and {keys[value.value]} are both {value.value!r}"
            keys[value.value] = target.id
    assert {state.RECORDS, state.DATA_UPLOAD, state.MODEL_PARAMS} <= set(keys)
    assert state.key_for(state.MODEL_PARAMS, "m0", "k1") == "params_m0,k1"


def test_favicon_is_drawn_locally() -> None:
    import ast
    from pathlib import Path

    from app_support.icon import favicon

    img = favicon()
    assert img.shape == (64, 64, 4) and img.dtype.name == "uint8"
    assert (img[..., 3] == 255).mean() > 0.8 and (img[..., :3] == 255).all(axis=-1).sum() > 100  # loop drawn
    tree = ast.parse((Path(__file__).resolve().parents[2] / "app.py").read_text())
    icons = [kw.value for node in ast.walk(tree) if isinstance(node, ast.Call)
             for kw in node.keywords if kw.arg == "page_icon"]
    assert icons and not any(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in icons)
