"""Hostile files through the command line, as a user would run it: ``python -m nlid_core identify FILE``.

Each file must give exit status 2 with one specific, printable line on stderr within 30 s, with no
process of the run (the CLI or its file-reading worker) above 2 GB resident — never a crash, an
internal error (exit 3), a hang or a success on shifted columns. Awkward but benign files load
with the right columns.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from nlid_core.guard import load_record_guarded
from tests import hostile_files as hf
from tests.crash_files import mat_reader_crash

REPO = Path(__file__).resolve().parents[1]
LIMIT_S = 30.0
LIMIT_MB = 2048.0

#: every hostile file -> (generator, extra environment, a word the message must contain)
HOSTILE: dict[str, tuple[Callable[[Path], Path], dict[str, str], str]] = {
    make.__name__: (make, {}, "") for make in hf.HOSTILE
}
HOSTILE["mat_reader_crash"] = (mat_reader_crash, {}, "")
#: the same file with a reader that has a native bug (tests/fault_injection): the worker dies, not the CLI
HOSTILE["mat_reader_crash_unguarded"] = (mat_reader_crash, {
    "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent / "fault_injection"),
                                                os.environ.get("PYTHONPATH")])),
    "NLID_TEST_UNGUARDED_MAT": "1",
}, "crashed")
HOSTILE["csv_many_rows"] = (hf.csv_many_rows, {"NLID_MAX_ROWS": "100000"}, "NLID_MAX_ROWS")
for _name, _word in {"xlsx_dimension_bomb": "NLID_MAX_COLUMNS", "xlsx_zip_bomb": "NLID_MAX_RATIO",
                     "mat_zlib_bomb": "NLID_MAX_CELLS", "parquet_rle_bomb": "NLID_MAX_ROWS",
                     "parquet_many_row_groups": "NLID_MAX_ROW_GROUPS", "csv_wide": "NLID_MAX_COLUMNS",
                     "csv_long_row": "row 30", "csv_comma_decimal_comma": "decimal comma"}.items():
    HOSTILE[_name] = (HOSTILE[_name][0], {}, _word)


def _peak_mb_of(cmd: list[str], env_extra: dict[str, str]) -> tuple[int, str, float, float]:
    """Run ``cmd`` and return (status, stderr, seconds, largest resident set of it or any descendant in MB).

    The figure is an upper bound: the kernel's peak for a process also counts the test runner it was
    forked from before it started the CLI.
    """
    env = dict(os.environ, **env_extra)
    env.pop("NLID_DEBUG", None)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    deadline = start + 120
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"{cmd} did not finish in 120 s")
        time.sleep(0.05)
    elapsed = time.monotonic() - start
    err = proc.stderr.read()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, err.decode(errors="replace"), elapsed, usage.ru_maxrss / 1024.0


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_file_is_one_specific_line_within_limits(kind, tmp_path):
    make, env, word = HOSTILE[kind]
    path = make(tmp_path)
    status, err, elapsed, peak_mb = _peak_mb_of(
        [sys.executable, "-m", "nlid_core", "identify", str(path), "--terms", "m0,c1,k1"], env)
    lines = err.strip().splitlines()
    assert status == 2, f"{kind}: exit {status}, stderr {err[:500]!r}"
    assert len(lines) == 1 and lines[0].startswith("error: ") and lines[0].isprintable(), err[:500]
    assert len(lines[0]) <= 400, lines[0]
    assert path.name in lines[0], lines[0]
    assert word.lower() in lines[0].lower(), lines[0]
    assert elapsed < LIMIT_S, f"{kind}: {elapsed:.1f} s"
    assert peak_mb < LIMIT_MB, f"{kind}: {peak_mb:.0f} MB"


@pytest.mark.parametrize("make", hf.BENIGN, ids=lambda f: f.__name__)
def test_awkward_files_load_without_a_shift(make, tmp_path):
    path = make(tmp_path)
    rec = load_record_guarded(path)
    ref = hf.expected()
    for c in ("t", "f", "x"):
        np.testing.assert_allclose(getattr(rec, c), ref[c], rtol=1e-12, atol=1e-15)
