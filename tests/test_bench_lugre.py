"""The LuGre benchmark script runs end to end in a tiny configuration (no timing is asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_lugre_runs_in_a_tiny_configuration() -> None:
    args = ["--samples", "1000", "--window", "400", "--period", "0.4", "--sigma0", "1e5", "--repeats", "1",
            "--tolerances", "1e-4,1e-8", "--reference-rtol", "1e-9"]
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_lugre.py"), *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for needle in ("cores", "reference: Radau", "check of the reference", "scipy Radau", "nlid SDIRK4",
                   "nlid simulate auto", "matched accuracy", "full record"):
        assert needle in out, needle
