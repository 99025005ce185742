"""Benchmark: how long a user waits before any work — CLI start-up and the isolation of an upload.

Times, as a user runs them, in fresh processes: ``python -m nlid_core --help``, ``python -m nlid_core
terms`` and the default ``python -m nlid_core identify seed.csv`` (all samples, x, v, a measured), each
the median of ``--repeats`` runs after one run that fills the caches (compiled kernels, term programs).
Then, in this process as the dashboard does it, a 1e5-sample CSV (t, f, x) read in process
(``nlid_core.io.load_record``) against the guarded read every upload takes
(``nlid_core.guard.load_record_guarded``, a worker started ahead by ``prestart_reader``): the overhead
of isolation is their difference.

Targets (quiet 2-core machine): ``--help`` and ``terms`` <= 0.5 s, ``identify seed.csv`` <= 1.5 s, the
upload's overhead <= 0.1 s.

Run: ``python bench/bench_startup.py [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _wall(argv: list[str], repeats: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "nlid_core", *argv]
    subprocess.run(cmd, env=env, check=True, capture_output=True)  # fills the caches
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    from nlid_core.guard import load_record_guarded, prestart_reader
    from nlid_core.io import load_record

    with tempfile.TemporaryDirectory() as tmp:
        seed = Path(tmp) / "seed.csv"
        subprocess.run([sys.executable, "-m", "nlid_core", "example", "seed", "--out", str(seed)],
                       env=dict(os.environ, PYTHONPATH=str(REPO)), check=True, capture_output=True)
        rows = [("--help", ["--help"], 0.5), ("terms", ["terms"], 0.5),
                ("identify seed.csv", ["identify", str(seed), "--quiet"], 1.5)]
        for name, argv, target in rows:
            t = _wall(argv, args.repeats)
            print(f"{name:<20s} {t:6.3f} s wall (median of {args.repeats}; target <= {target} s)")

        csv = Path(tmp) / "upload.csv"
        t = np.arange(100_000) / 1000.0
        np.savetxt(csv, np.column_stack([t, np.sin(t), np.cos(3 * t)]), delimiter=",", header="t,f,x",
                   comments="", fmt="%.10g")
        load_record(csv)
        inproc, guarded = [], []
        prestart_reader()
        for _ in range(args.repeats):
            time.sleep(2.0)  # the next worker finishes its imports, as between two uploads
            t0 = time.perf_counter()
            load_record(csv)
            inproc.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            load_record_guarded(csv)
            guarded.append(time.perf_counter() - t0)
        a, b = statistics.median(inproc), statistics.median(guarded)
        print(f"upload 1e5 samples   in process {a:.3f} s, isolated {b:.3f} s: overhead {b - a:.3f} s (target <= 0.1 s)")


if __name__ == "__main__":
    main()
