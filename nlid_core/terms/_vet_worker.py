"""Worker process that derives and compiles one typed term under a CPU budget (see
:mod:`nlid_core.terms.vetting`).

Run as ``python -m nlid_core.terms._vet_worker`` with ``{"name", "expression", "cpu_s", "out"}`` as
JSON on standard input. It limits itself first, ends with the process that asked, and answers in
``OUTDIR``: ``answer.json`` (``{"ok": true}`` or ``{"error": message}``) and, when ok, the compiled
programs as the program cache stores them. A CPU-limit signal leaves no answer; the parent says why.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

_MAX_REQUEST_BYTES = 100_000


def main(argv: list[str]) -> int:
    from nlid_core.isolation import die_with_parent, limit_self

    die_with_parent()
    raw = sys.stdin.buffer.read(_MAX_REQUEST_BYTES + 1)
    if not raw or len(raw) > _MAX_REQUEST_BYTES:
        return 4
    request = json.loads(raw)
    out = Path(request["out"])
    limit_self(cpu_s=float(request["cpu_s"]), memory_bytes=1 << 30, file_bytes=64 << 20, nice=10,
               hard_cpu_margin_s=2)
    from nlid_core.terms.vetting import worker_compile

    try:
        doc = worker_compile(request, out)
    except RecursionError:
        doc = {"error": f"custom term `{request['name']}` is nested too deeply"}
    except MemoryError:
        doc = {"error": f"custom term `{request['name']}` needs more than 1024 MB to derive and compile; simplify it"}
    except Exception as exc:  # noqa: BLE001 - reported as one line; the parent refuses the term
        doc = {"error": f"custom term `{request['name']}` could not be compiled ({type(exc).__name__})"}
    tmp = out / "answer.tmp"
    tmp.write_text(json.dumps(doc), encoding="utf-8")
    tmp.replace(out / "answer.json")
    return 0


if __name__ == "__main__":
    os._exit(main(sys.argv))  # answer written: no interpreter teardown to wait for
