"""``identify --study`` and ``python -m nlid_core studies ...`` (nlid_core.cli.studies).

What is saved (records once, under their file's stem; the run's config without paths; failed fits
marked failed), every ``studies`` command with its JSON, sharing seen from both sides, and bad input:
one line on stderr, exit status 2, the database unchanged (hostile study files included).
"""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import pytest
import sqlalchemy as sa
from test_store_archive import _dump, _members, _pack

from nlid_core.cli import main
from nlid_core.examples import make_example
from nlid_core.io import write_record
from nlid_core.store import studies as S
from nlid_core.store.db import open_store

FAST = ["--terms", "m0,c1,k1,k3", "--method", "equation-error"]


@pytest.fixture(autouse=True)
def _no_ambient_settings(monkeypatch):
    for var in ("NLID_LOCAL_USER", "NLID_DATABASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("records")
    (d / "other").mkdir()
    out = {"train": d / "train.csv", "val": d / "val.csv", "train2": d / "other" / "train.csv"}
    write_record(make_example("seed", overrides={"duration_s": 3.0}), out["train"])
    write_record(make_example("seed", overrides={"duration_s": 3.0, "seed": 3, "amplitude_n": 15.0}), out["val"])
    write_record(make_example("seed", overrides={"duration_s": 3.0, "seed": 5}), out["train2"])
    return out


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'studies.sqlite'}"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def _fails(capsys, *argv: str, match: str) -> str:
    """Exit status 2, nothing on stdout, one line on stderr containing ``match``."""
    status, out, err = _run(capsys, *argv)
    assert status == 2 and out == "", (status, out, err)
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    assert match in err, err
    return err


def _study(url: str, owner: str, name: str):
    with open_store(url) as store:
        st = S.open_study(store, owner, name)
        return st, S.list_records(store, owner, st.id), S.list_runs(store, owner, st.id)


# ----------------------------------------------------------------------------- identify --study


def test_identify_saves_records_and_a_run_without_paths(files, url, capsys, tmp_path):
    status, out, err = _run(capsys, "identify", files["train"], "--validate", files["val"], *FAST,
                            "--study", "Beam A", "--database", url, "--json", tmp_path / "fit.json")
    assert status == 0 and err == ""
    assert out.splitlines()[-1] == f"saved run 1 to study Beam A ({url})"
    st, recs, (run,) = _study(url, "local", "Beam A")
    assert st.owner == "local" and [r.name for r in recs] == ["train", "val"]
    cfg = run.config
    assert cfg["command"] == "identify" and cfg["files"] == ["train.csv", "val.csv"]
    assert (cfg["records"], cfg["validation_records"]) == (["train"], ["val"])
    assert cfg["options"]["terms"] == "m0,c1,k1,k3" and cfg["options"]["method"] == "equation-error"
    assert set(cfg["parameter_setup"]) == {"m0", "c1", "k1", "k3"}
    for hidden in ("data", "validate", "json", "study", "database", "owner", "quiet"):
        assert hidden not in cfg["options"], hidden
    assert str(files["train"].parent) not in json.dumps(cfg) and str(tmp_path) not in json.dumps(cfg)
    assert run.success and run.label == "identify equation-error (m0,c1,k1,k3)"
    fit = json.loads((tmp_path / "fit.json").read_text())
    assert run.result["parameters"]["k1"]["value"] == fit["parameters"]["k1"]["value"]
    assert run.result["validation"] and run.result["parameter_setup"] == fit["parameter_setup"]

    # the same file again: the record is reused; another file with the same stem gets its own name
    assert _run(capsys, "identify", files["train"], *FAST, "--study", "Beam A", "--database", url)[0] == 0
    status, out, _ = _run(capsys, "identify", files["train2"], *FAST, "--study", "Beam A", "--database", url,
                          "--quiet")
    assert status == 0 and out == ""
    _, recs, runs = _study(url, "local", "Beam A")
    assert [r.name for r in recs] == ["train", "train (2)", "val"]
    assert [r.config["records"] for r in runs] == [["train"], ["train"], ["train (2)"]]
    assert recs[0].sha256 != recs[1].sha256


def test_a_failed_fit_is_saved_marked_failed(files, url, capsys):
    # a stiffness fixed far negative: no start simulates (the automatic initial guess keeps it too)
    status, out, _ = _run(capsys, "identify", files["train"], "--terms", "m0,c1,k1", "--method", "output-error",
                          "--fix", "k1=-5e5", "--study", "Unstable", "--database", url)
    assert status == 1 and out.splitlines()[-1].startswith("saved run 1 to study Unstable")
    _, _, (run,) = _study(url, "local", "Unstable")
    assert run.success is False and run.result["success"] is False and run.result["message"]


def test_the_owner_comes_from_the_option_then_the_environment(files, url, capsys, monkeypatch):
    monkeypatch.setenv("NLID_LOCAL_USER", "alice")
    assert _run(capsys, "identify", files["train"], *FAST, "--study", "Mine", "--database", url)[0] == 0
    assert _run(capsys, "identify", files["train"], *FAST, "--study", "Mine", "--database", url,
                "--owner", "bob")[0] == 0
    assert _study(url, "alice", "Mine")[0].owner == "alice"
    assert _study(url, "bob", "Mine")[0].owner == "bob"
    # any local name is mapped as the dashboard's local mode maps it, so both reach the same studies
    monkeypatch.setenv("NLID_LOCAL_USER", "j-doe smith!")
    assert _run(capsys, "identify", files["train"], *FAST, "--study", "Mine", "--database", url)[0] == 0
    from app_support.identity import resolve

    dashboard = resolve(auth_configured=False, user_info={}, headers={}, env={"NLID_LOCAL_USER": "j-doe smith!"})
    assert dashboard.user is not None and dashboard.user.owner == "j-2ddoe-20smith-21"
    assert _study(url, "j-2ddoe-20smith-21", "Mine")[0].owner == "j-2ddoe-20smith-21"


def test_bad_study_options_fail_before_the_fit(files, url, capsys):
    # nothing on stdout: the identification never started
    _fails(capsys, "identify", files["train"], "--study", "Beam A", "--database",
           "postgresql://nlid:hunter2@127.0.0.1:1/nlid", match="cannot open the study database "
                                                               "postgresql://nlid:***@127.0.0.1:1/nlid")
    _fails(capsys, "identify", files["train"], "--study", "a/b", "--database", url, match="`--study` may hold")
    _fails(capsys, "identify", files["train"], "--study", "x", "--owner", "a b", "--database", url,
           match="`--owner` must be")
    _fails(capsys, "identify", files["train"], "--database", url, match="--database: only with `--study NAME`")
    _fails(capsys, "identify", files["train"], "--study", "x", "--database", "mysql://u@h/db",
           match="SQLite or PostgreSQL")
    with open_store(url) as store:
        assert S.list_studies(store, "local") == ()


def test_identify_saves_into_a_real_postgresql(files, pg_server, capsys):
    url = pg_server()
    status, out, _ = _run(capsys, "identify", files["train"], *FAST, "--study", "Beam A", "--database", url)
    shown = sa.make_url(url).render_as_string(hide_password=True)
    assert status == 0 and out.splitlines()[-1] == f"saved run 1 to study Beam A ({shown})"
    status, out, _ = _run(capsys, "studies", "runs", "Beam A", "--database", url)
    assert status == 0 and "identify equation-error (m0,c1,k1,k3)" in out


def test_multi_dof_identify_saves_the_records_and_the_model(url, capsys, tmp_path):
    assert _run(capsys, "experiments", "--preset", "chain", "--masses", "2", "--duration", "2", "--out",
                tmp_path / "chain")[0] == 0
    d = tmp_path / "chain"
    status, out, _ = _run(capsys, "identify", "--model", d / "model.toml", d / "small.csv", d / "multi1.csv",
                          "--stages", "none", "--study", "Chain", "--database", url)
    assert status == 0 and out.splitlines()[-1].startswith("saved run 1 to study Chain")
    _, recs, (run,) = _study(url, "local", "Chain")
    assert [r.name for r in recs] == ["multi1", "small"] and recs[0].channels == ("t", "f1", "x1", "x2")
    cfg = run.config
    assert cfg["model_file"] == "model.toml" and "[[connection]]" in cfg["model_toml"]
    assert cfg["records"] == ["small", "multi1"] and cfg["stages"] == "none"
    assert "terms" not in cfg["options"], "single-DOF options do not describe a model-file run"
    assert run.result["method"] == "staged-output-error" and run.result["parameters"]


# ----------------------------------------------------------------------------- studies commands


def _fill(url: str, train: Path) -> str:
    """A study "Beam A" of `local` with two runs on one record."""
    for method in ("equation-error", "two-stage"):
        assert main(["identify", str(train), "--terms", "m0,c1,k1,k3", "--method", method, "--study", "Beam A",
                     "--database", url, "--quiet"]) == 0
    return url


@pytest.fixture
def filled(files, url) -> str:
    return _fill(url, files["train"])


@pytest.fixture(scope="module")
def filled_once(files, tmp_path_factory) -> str:
    """As ``filled``, shared by tests that change nothing."""
    return _fill(f"sqlite:///{tmp_path_factory.mktemp('db') / 'studies.sqlite'}", files["train"])


def test_list_show_runs_compare_with_json(filled, capsys, tmp_path):
    url = filled
    status, out, _ = _run(capsys, "studies", "list", "--database", url, "--json", tmp_path / "l.json")
    assert status == 0 and "Beam A" in out and f"studies of local in {url}: 1" in out
    (doc,) = json.loads((tmp_path / "l.json").read_text())
    assert doc["name"] == "Beam A" and doc["owner"] == "local" and doc["shared_with_you"] is False

    status, out, _ = _run(capsys, "studies", "show", "Beam A", "--database", url, "--json", tmp_path / "s.json")
    assert status == 0 and "runs: 2" in out and "records: 1" in out and "shared with: nobody" in out
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["runs"] == 2 and [r["name"] for r in doc["records"]] == ["train"] and doc["shares"] == []

    status, out, _ = _run(capsys, "studies", "runs", "Beam A", "--database", url, "--json", tmp_path / "r.json")
    assert status == 0 and "identify two-stage (m0,c1,k1,k3)" in out
    runs = json.loads((tmp_path / "r.json").read_text())
    assert [r["id"] for r in runs] == [1, 2] and all(r["success"] for r in runs)

    status, out, _ = _run(capsys, "studies", "compare", "Beam A", "--runs", "2", "--database", url,
                          "--json", tmp_path / "c.json")
    assert status == 0 and "k3 stderr" in out
    (row,) = json.loads((tmp_path / "c.json").read_text())
    with open_store(url) as store:
        frame = S.compare_runs(store, "local", S.open_study(store, "local", "Beam A").id, [2])
    assert row["run"] == 2 and row["k1"] == float(frame.loc[2, "k1"]) and row["label"] == runs[1]["label"]


def test_export_import_rename_duplicate_delete(filled, capsys, tmp_path):
    url = filled
    archive = tmp_path / "beam.zip"
    status, out, _ = _run(capsys, "studies", "export", "Beam A", "--out", archive, "--database", url)
    assert status == 0 and out.startswith("wrote study Beam A to beam.zip") and zipfile.is_zipfile(archive)
    _fails(capsys, "studies", "import", archive, "--database", url, match="import it with another `--name`")
    status, out, _ = _run(capsys, "studies", "import", archive, "--name", "Beam B", "--database", url)
    assert status == 0 and out.startswith("imported beam.zip as study Beam B")
    assert _run(capsys, "studies", "rename", "Beam B", "Beam C", "--database", url)[0] == 0
    assert _run(capsys, "studies", "duplicate", "Beam C", "Beam D", "--database", url)[0] == 0
    _fails(capsys, "studies", "rename", "Beam C", "Beam D", "--database", url, match="already has a study named")
    _fails(capsys, "studies", "delete", "Beam D", "--confirm", "Beam C", "--database", url,
           match="`confirm` must repeat the study name 'Beam D'")
    status, out, _ = _run(capsys, "studies", "delete", "Beam D", "--confirm", "Beam D", "--database", url,
                          "--json", tmp_path / "d.json")
    assert status == 0 and json.loads((tmp_path / "d.json").read_text())["deleted"]["name"] == "Beam D"
    with open_store(url) as store:
        assert sorted(s.name for s in S.list_studies(store, "local")) == ["Beam A", "Beam C"]
        a, c = (S.open_study(store, "local", n) for n in ("Beam A", "Beam C"))
        assert [r.result for r in S.list_runs(store, "local", a.id)] == [r.result for r in
                                                                          S.list_runs(store, "local", c.id)]


def test_sharing_seen_from_both_sides(filled, capsys, tmp_path):
    url = filled
    bob = ["--database", url, "--owner", "bob"]
    _fails(capsys, "studies", "show", "Beam A", *bob, match="'bob' has no study named 'Beam A'")
    _fails(capsys, "studies", "show", "local/Beam A", *bob, match="no study 'local/Beam A' is yours or shared")
    status, out, _ = _run(capsys, "studies", "share", "Beam A", "bob", "--database", url)
    assert status == 0 and out.strip() == "shared study Beam A with bob; shared with: bob"

    status, out, _ = _run(capsys, "studies", "list", *bob)
    assert status == 0 and "local/Beam A" in out and "(shared by local)" in out
    for ref in ("Beam A", "local/Beam A"):
        status, out, _ = _run(capsys, "studies", "runs", ref, *bob)
        assert status == 0 and "runs of study local/Beam A: 2" in out
    assert _run(capsys, "studies", "compare", "Beam A", *bob)[0] == 0
    assert _run(capsys, "studies", "export", "Beam A", "--out", tmp_path / "b.zip", *bob)[0] == 0
    assert _run(capsys, "studies", "import", tmp_path / "b.zip", *bob)[0] == 0  # bob's own copy
    # bob's own study of the same name wins; the shared one stays reachable as OWNER/NAME
    status, out, _ = _run(capsys, "studies", "show", "Beam A", *bob)
    assert status == 0 and out.startswith("study Beam A (id ") and "owner bob" in out
    _, out, _ = _run(capsys, "studies", "show", "local/Beam A", *bob)
    assert "owner local" in out and "shared with" not in out, "only the owner sees who it is shared with"
    for argv in (["rename", "local/Beam A", "X"], ["delete", "local/Beam A", "--confirm", "Beam A"],
                 ["share", "local/Beam A", "carol"], ["duplicate", "local/Beam A", "Y"]):
        _fails(capsys, "studies", *argv, *bob, match="shared with you")

    # two engineers share a study of the same name with carol: she must say whose
    assert _run(capsys, "studies", "share", "Beam A", "carol", *bob)[0] == 0
    assert _run(capsys, "studies", "share", "Beam A", "carol", "--database", url)[0] == 0
    _fails(capsys, "studies", "show", "Beam A", "--database", url, "--owner", "carol",
           match="several engineers share a study named 'Beam A' with you: ")
    assert _run(capsys, "studies", "show", "bob/Beam A", "--database", url, "--owner", "carol")[0] == 0

    status, out, _ = _run(capsys, "studies", "unshare", "Beam A", "bob", "--database", url, "--json",
                          tmp_path / "u.json")
    assert status == 0 and out.strip() == "study Beam A is no longer shared with bob; shared with: carol"
    assert json.loads((tmp_path / "u.json").read_text()) == {"shares": ["carol"], "study": "Beam A"}
    _fails(capsys, "studies", "runs", "local/Beam A", *bob, match="no study 'local/Beam A'")


@pytest.mark.parametrize("argv, match", [
    (["studies", "show", "Nope"], "'local' has no study named 'Nope'"),
    (["studies", "show", "bad name!"], "`NAME` may hold"),
    (["studies", "list", "--owner", "a b"], "`--owner` must be"),
    (["studies", "compare", "Beam A", "--runs", "1,x"], "`--runs` takes run ids"),
    (["studies", "compare", "Beam A", "--runs", "7"], "`run_ids` names runs not in the study: [7]"),
    (["studies", "import", "missing.zip"], "cannot read `FILE` 'missing.zip'"),
    (["studies", "export", "Beam A", "--out", "."], "`--out` '.' is a directory"),
    (["studies", "share", "Beam A", "not valid!"], "`ENGINEER` must be"),
    (["studies", "delete", "Beam A"], "--confirm"),
    (["studies", "frobnicate"], "invalid choice"),
])
def test_bad_input_is_one_line_and_changes_nothing(filled_once, capsys, argv, match, monkeypatch, tmp_path):
    filled = filled_once
    monkeypatch.chdir(tmp_path)
    with open_store(filled) as store:
        before = _dump(store)
    status, out, err = _run(capsys, *argv, "--database", filled)
    assert status == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert match in err, err
    with open_store(filled) as store:
        assert _dump(store) == before


def test_an_unreachable_database_is_one_line(capsys):
    _fails(capsys, "studies", "list", "--database", "postgresql://nlid:pw@127.0.0.1:1/nlid",
           match="cannot open the study database postgresql://nlid:***@127.0.0.1:1/nlid (`--database`)")


def _hostile(good: bytes) -> dict[str, bytes]:
    m = _members(good)
    manifest = json.loads(m["manifest.json"])
    return {
        "path traversal": _pack({**m, "../evil.json": b"{}"}),
        "a pickle": _pack({**m, "records/payload.pkl": pickle.dumps({"x": 1})}),
        "zip bomb": _pack({**m, "runs.json": b"[" + b" " * 2_000_000 + b"]"}),
        "another schema": _pack({**m, "manifest.json": json.dumps({**manifest, "schema_revision": "9999"}).encode()},
                                resign=False),
        "not a zip": b"PK\x03\x04 not really",
    }


def test_hostile_study_files_are_refused_in_one_line_and_change_nothing(filled, capsys, tmp_path):
    url = filled
    good = tmp_path / "good.zip"
    assert _run(capsys, "studies", "export", "Beam A", "--out", good, "--database", url)[0] == 0
    with open_store(url) as store:
        before = _dump(store)
    expected = {"path traversal": "leaves its folder", "a pickle": "is a pickle", "zip bomb": "(zip bomb)",
                "another schema": "schema revision is '9999'", "not a zip": "is not a zip archive"}
    for what, data in _hostile(good.read_bytes()).items():
        path = tmp_path / "hostile.zip"
        path.write_bytes(data)
        err = _fails(capsys, "studies", "import", path, "--name", "Hostile", "--database", url, match=expected[what])
        assert err[:-1].isprintable(), what
        with open_store(url) as store:
            assert _dump(store) == before, what
