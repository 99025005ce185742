"""Fault injection for the crash-isolation tests: a reader with a native bug, inside the parsing worker.

nlid's own MAT reader walks every header before scipy sees the file, so the known file that makes
scipy's MAT reader segfault (``tests/crash_files.mat_reader_crash``) is now refused cleanly. The
isolation that protects the server from the crashes nobody has found yet must still be tested
with a real native crash: a test puts this directory on ``PYTHONPATH`` (the parsing worker
inherits it) and sets ``NLID_TEST_UNGUARDED_MAT=1``; Python then imports this module at start-up,
and in that process the crash file (recognised by its changed byte) is handed straight to ``scipy.io.loadmat``,
which dies of SIGSEGV on them. Nothing here is used outside the tests.
"""

import os

_io = None
if os.environ.get("NLID_TEST_UNGUARDED_MAT") == "1":
    try:  # only the worker has the package on its path at start-up
        import nlid_core.io.readers as _io
    except ImportError:
        _io = None

if _io is not None:
    _original = _io._READERS[".mat"]

    def _unguarded(path, limits):  # type: ignore[no-untyped-def]
        data = path.read_bytes()[:200]
        if len(data) > 145 and data[145] == 0xFF:  # the byte changed by tests/crash_files.mat_reader_crash
            import scipy.io

            scipy.io.loadmat(str(path))  # segfaults on the crash file
        return _original(path, limits)

    _io._READERS = {**_io._READERS, ".mat": _unguarded}  # type: ignore[misc]
