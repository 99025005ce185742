"""Worker process that parses one request of untrusted files (see :mod:`nlid_core.guard`).

Run as ``python -m nlid_core._parse_worker`` with a JSON request on standard
input. The worker arms its death with the parent, imports the readers (so a
worker started ahead is ready when a file comes: :func:`nlid_core.isolation.prestart`),
then reads the request, limits itself (address space, CPU time, size of files
it writes, no core dumps, lowest priority) before opening any file, and parses.
It answers only with plain data in the request's ``out`` folder (OUTDIR):

* ``result.json``: one header per record (name, units, derived channels,
  source, warnings, meta) and ``rec<i>.npz``: its channels as float64 arrays
  named as the record names them (``t, f, x`` or ``t, f1, x1, x2, ...``;
  written with ``numpy.savez``, read back with ``allow_pickle=False``);
* or ``error.json``: ``{"kind": "data" | "memory" | "internal", "message"}``.

A native crash, a CPU-time signal or a kill by the parent leaves neither file;
the parent turns the exit status into a message.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

_MB = 1_000_000
#: Largest request read from standard input (paths and options only).
_MAX_REQUEST_BYTES = 1_000_000


def _limit_self(limits: dict[str, Any]) -> None:
    """Apply the resource limits of ``limits`` to this process (before touching any file); lowest
    priority: a parse yields the CPU to every other user's work."""
    from .isolation import limit_self

    limit_self(cpu_s=float(limits["parse_cpu_s"]), memory_bytes=int(float(limits["parse_memory_mb"]) * _MB),
               file_bytes=int(float(limits["max_cells"]) * 8 * 1.2) + 64 * _MB, nice=19)


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, allow_nan=False), encoding="utf-8")
    tmp.replace(path)


def _run(request: dict[str, Any], out: Path) -> None:
    import numpy as np

    from .errors import NlidError
    from .io import load_record, load_records
    from .limits import Limits
    from .record import Record

    limits = Limits(**request["limits"])
    kwargs = dict(request["kwargs"])
    records: tuple[Record, ...]
    try:
        if request["single"]:
            records = (load_record(request["paths"][0], limits=limits, **kwargs),)
        else:
            records = load_records(request["paths"], limits=limits, **kwargs)
    except NlidError as exc:
        _write_json(out / "error.json", {"kind": "data", "message": str(exc)})
        return
    headers = []
    for i, rec in enumerate(records):
        arrays: dict[str, Any] = {c: np.asarray(rec.channel(c), dtype=np.float64) for c in rec.channels}
        np.savez(out / f"rec{i}.npz", allow_pickle=False, **arrays)
        headers.append({
            "name": rec.name,
            "units": dict(rec.units),
            "derived": list(rec.derived),
            "source": rec.source,
            "warnings": list(rec.warnings),
            "meta": json.loads(json.dumps(rec.meta, default=str)),
        })
    _write_json(out / "result.json", {"records": headers})


def _warm_up() -> None:
    """Read a small CSV of our own before the request comes, so that what a parse imports and
    initialises on first use is done while the worker waits (a worker started ahead)."""
    import tempfile

    from .io import load_record

    with tempfile.TemporaryDirectory(prefix="nlid-warm-") as tmp:
        path = Path(tmp) / "warm.csv"
        path.write_text("t,f,x\n" + "".join(f"{i * 0.001},{i % 7},{i % 5}\n" for i in range(64)))
        try:
            load_record(path)
        except Exception:  # noqa: BLE001 - warming only; the real parse reports its own errors
            pass


def main(argv: list[str]) -> int:
    from .isolation import die_with_parent

    die_with_parent()
    _warm_up()

    raw = sys.stdin.buffer.read(_MAX_REQUEST_BYTES + 1)
    if not raw or len(raw) > _MAX_REQUEST_BYTES:
        return 4
    request = json.loads(raw)
    out = Path(request["out"])
    os.chdir(out)
    _limit_self(request["limits"])
    try:
        _run(request, out)
    except MemoryError:
        _write_json(out / "error.json", {"kind": "memory", "message": "memory limit reached"})
    except RecursionError:
        _write_json(out / "error.json", {"kind": "data", "message": "the file is nested too deeply to read"})
    except OSError as exc:
        _write_json(out / "error.json", {"kind": "internal", "message": f"{type(exc).__name__}: {exc}"})
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides what the user sees
        _write_json(out / "error.json", {"kind": "internal", "message": f"{type(exc).__name__}: {exc}"})
    return 0


if __name__ == "__main__":
    # the answer is written and closed: skip the interpreter's teardown of pandas and numpy (~0.1 s the
    # parent would wait for)
    os._exit(main(sys.argv))
