"""Files that crash a third-party reader natively (not with a Python exception).

Kept apart from the other hostile files: these must only ever be opened through the isolated
worker of :mod:`nlid_core.guard` (or in a subprocess), never in the test process itself.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import scipy.io

#: Offset and value of the byte that makes scipy 1.17's MAT v5 reader segfault on
#: :func:`mat_reader_crash`'s file: the high byte of the first variable's tag size
#: (found by flipping single bytes of a small uncompressed MAT file).
MAT_CRASH_BYTE = (145, 0xFF)


def mat_reader_crash(directory: Path, name: str = "crash.mat") -> Path:
    """A 1.5 kB MATLAB v5 file (t, f, x: 50 samples) with one byte changed; ``scipy.io.loadmat`` dies on it."""
    t = np.arange(50) / 100.0
    buf = io.BytesIO()
    scipy.io.savemat(buf, {"t": t, "f": np.sin(t), "x": np.cos(t)}, do_compression=False)
    data = bytearray(buf.getvalue())
    offset, value = MAT_CRASH_BYTE
    data[offset] = value
    path = Path(directory) / name
    path.write_bytes(bytes(data))
    return path


def mat_valid(directory: Path, name: str = "valid.mat", n: int = 400) -> Path:
    """A valid MATLAB v5 record (t, f, x) with ``n`` samples."""
    t = np.arange(n) / 200.0
    path = Path(directory) / name
    scipy.io.savemat(path, {"t": t, "f": np.sin(7 * t), "x": 1e-3 * np.cos(7 * t)}, do_compression=False)
    return path
