"""Tests of nlid_core.guard: untrusted files are parsed in an isolated, limited worker process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nlid_core.errors import DataValidationError
from nlid_core.guard import load_record_guarded, load_records_guarded
from nlid_core.io import load_record, write_record
from nlid_core.limits import Limits
from nlid_core.record import from_arrays
from tests import hostile_files as hf
from tests.crash_files import mat_reader_crash, mat_valid

REPO = Path(__file__).resolve().parents[1]


def _one_line(msg: str) -> None:
    assert "\n" not in msg and "\r" not in msg
    assert msg.isprintable(), repr(msg)
    assert len(msg) <= 600


def _sine_csv(path: Path, n: int = 500) -> Path:
    t = np.arange(n) / 500.0
    rec = from_arrays(t, 3.0 * np.sin(9 * t), 1e-3 * np.sin(9 * t + 0.2), name="s")
    return write_record(rec, path)


def test_guarded_load_equals_in_process_load(tmp_path):
    path = _sine_csv(tmp_path / "sine.csv")
    ref = load_record(path, units="x=mm", rows="10:400")
    got = load_record_guarded(path, units="x=mm", rows="10:400")
    for c in ref.channels:
        np.testing.assert_array_equal(getattr(got, c), getattr(ref, c))
    assert got.name == ref.name and dict(got.units) == dict(ref.units)
    assert got.warnings == ref.warnings and dict(got.meta) == dict(ref.meta)


def test_several_files_with_the_names_load_records_gives(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    p1 = _sine_csv(tmp_path / "a" / "level.csv")
    p2 = _sine_csv(tmp_path / "b" / "level.csv", n=300)
    recs = load_records_guarded([p1, p2])
    assert [r.name for r in recs] == ["a/level", "b/level"] and [r.n for r in recs] == [500, 300]


FAULTS = Path(__file__).resolve().parent / "fault_injection"


@pytest.fixture
def unguarded_mat_reader(monkeypatch):
    """Workers started from now on hand ``crash*.mat`` files straight to scipy (see fault_injection/)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(FAULTS), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("NLID_TEST_UNGUARDED_MAT", "1")


def test_the_file_that_crashed_scipy_is_refused_before_scipy_sees_it(tmp_path):
    path = mat_reader_crash(tmp_path)
    # the file really kills a process that hands it to scipy directly
    direct = subprocess.run([sys.executable, "-c", f"import scipy.io; scipy.io.loadmat({str(path)!r})"],
                            capture_output=True, timeout=60)
    assert direct.returncode < 0
    with pytest.raises(DataValidationError) as err:
        load_record_guarded(path)
    _one_line(str(err.value))
    assert "crash.mat" in str(err.value)


def test_a_native_crash_of_a_reader_is_a_specific_error(tmp_path, unguarded_mat_reader):
    path = mat_reader_crash(tmp_path)
    with pytest.raises(DataValidationError) as err:
        load_record_guarded(path)
    msg = str(err.value)
    _one_line(msg)
    assert "crash.mat is corrupt" in msg and "MAT reader crashed" in msg and "SIG" in msg
    # this process is unharmed and the next file loads
    assert load_record_guarded(mat_valid(tmp_path)).n == 400


def test_wall_clock_limit_names_its_variable(tmp_path):
    path = _sine_csv(tmp_path / "sine.csv")
    start = time.monotonic()
    with pytest.raises(DataValidationError, match="NLID_PARSE_TIMEOUT_S") as err:
        load_record_guarded(path, limits=Limits(parse_timeout_s=0.01))
    assert time.monotonic() - start < 10
    _one_line(str(err.value))


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory) -> Path:
    """2e6 rows x 3 columns (about 150 MB of text)."""
    n = 2_000_000
    path = tmp_path_factory.mktemp("big") / "big.csv"
    t = np.arange(n) / 1e4
    with path.open("w") as fh:
        fh.write("t,f,x\n")
        np.savetxt(fh, np.column_stack([t, np.sin(t), np.cos(t)]), delimiter=",", fmt="%.17g")
    return path


def test_cpu_limit_names_its_variable(tmp_path):
    # streaming 150 000 spreadsheet rows takes a few seconds of CPU
    path = hf.xlsx_many_rows(tmp_path, rows=150_000)
    with pytest.raises(DataValidationError, match="s of CPU time .*NLID_PARSE_CPU_S") as err:
        load_record_guarded(path, limits=Limits(parse_cpu_s=1))
    _one_line(str(err.value))


def test_memory_limit_stops_the_worker_not_the_caller(big_csv):
    # 2e6 rows x 3 columns need more than the ~20 MB of address space left to this worker after its imports
    path = big_csv
    with pytest.raises(DataValidationError, match="NLID_PARSE_MEMORY_MB") as err:
        load_record_guarded(path, limits=Limits(parse_memory_mb=400))
    _one_line(str(err.value))


def test_environment_limits_apply_to_the_next_file(tmp_path, monkeypatch):
    path = _sine_csv(tmp_path / "sine.csv")
    monkeypatch.setenv("NLID_MAX_ROWS", "100")
    with pytest.raises(DataValidationError, match="NLID_MAX_ROWS"):
        load_record_guarded(path)
    monkeypatch.delenv("NLID_MAX_ROWS")
    assert load_record_guarded(path).n == 500


def test_bad_limit_setting_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("NLID_PARSE_MEMORY_MB", "lots")
    with pytest.raises(DataValidationError, match="NLID_PARSE_MEMORY_MB must be a positive number"):
        load_record_guarded(_sine_csv(tmp_path / "s.csv"))


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(DataValidationError, match="does not exist"):
        load_record_guarded(tmp_path / "nope.csv")
    with pytest.raises(DataValidationError, match="is not a file"):
        load_record_guarded(tmp_path)


def test_no_worker_is_left_behind(tmp_path, unguarded_mat_reader):
    path = mat_reader_crash(tmp_path)
    for _ in range(3):
        with pytest.raises(DataValidationError):
            load_record_guarded(path)
    # this process's own readers only (other tests may run beside it): at most the one started ahead
    # for the next file, waiting for its request, never one still busy with a crashed file
    import psutil

    time.sleep(0.5)
    readers = [p for p in psutil.Process().children(recursive=True) if "nlid_core._parse_worker" in p.cmdline()]
    assert len(readers) <= 1
    assert all(p.status() in (psutil.STATUS_SLEEPING, psutil.STATUS_ZOMBIE) and p.cpu_times().user < 5
               for p in readers)




@pytest.fixture(scope="module")
def mat_bytes(tmp_path_factory) -> bytes:
    return mat_valid(tmp_path_factory.mktemp("mat")).read_bytes()


@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_mat_files_never_escape_the_worker(tmp_path, mat_bytes, data):
    """Fuzz: flipped, truncated and inserted bytes in a MAT file give a record or a one-line error."""
    raw = bytearray(mat_bytes)
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        op = data.draw(st.sampled_from(["flip", "set", "truncate", "insert"]), label="op")
        i = data.draw(st.integers(0, len(raw) - 1), label="offset")
        if op == "flip":
            raw[i] ^= 1 << data.draw(st.integers(0, 7), label="bit")
        elif op == "set":
            raw[i] = data.draw(st.sampled_from([0x00, 0x7F, 0x80, 0xFF]), label="value")
        elif op == "truncate":
            del raw[max(i, 1):]
        else:
            raw[i:i] = data.draw(st.binary(min_size=1, max_size=16), label="insert")
    path = tmp_path / "fuzz.mat"
    path.write_bytes(bytes(raw))
    try:
        rec = load_record_guarded(path, limits=Limits(parse_timeout_s=20))
    except DataValidationError as exc:
        _one_line(str(exc))
    else:
        assert rec.n >= 20
