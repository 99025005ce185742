"""Benchmark: does one engineer's heavy upload slow down another engineer's identification?

Times the default CLI command on the seed example (``python -m nlid_core identify seed.csv``) alone,
then while other users keep the server busy reading files through the guarded loader (the path
every upload takes): a large legitimate CSV (``--rows`` rows, read in full by a niced worker) and
the hostile files of ``tests/hostile_files.py`` (refused before they allocate). Prints the median
times and the ratio against the identification alone; before the guarded loader, one xlsx zip bomb
parsed in the server process cost 85-93 s of CPU and doubled to tripled other sessions' times.

Run: ``python bench/bench_isolation.py [--repeats 5] [--rows 3000000]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from nlid_core.errors import DataValidationError  # noqa: E402
from nlid_core.guard import load_record_guarded  # noqa: E402
from tests import hostile_files as hf  # noqa: E402


def _identify(seed: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "nlid_core", "identify", str(seed), "--quiet"], cwd=REPO, check=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rows", type=int, default=3_000_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        seed = d / "seed.csv"
        subprocess.run([sys.executable, "-m", "nlid_core", "example", "seed", "--out", str(seed)], cwd=REPO,
                       check=True, stdout=subprocess.DEVNULL)
        big = d / "big.csv"
        t = np.arange(args.rows) / 1e3
        with big.open("w") as fh:
            fh.write("t,f,x\n")
            np.savetxt(fh, np.column_stack([t, np.sin(t), 1e-3 * np.cos(t)]), delimiter=",", fmt="%.10g")
        hostile = [make(d) for make in hf.HOSTILE]
        _identify(seed)  # numba cache warm
        alone = [_identify(seed) for _ in range(args.repeats)]

        stop = threading.Event()
        reads = {"big": 0, "hostile": 0}

        def busy_big() -> None:
            while not stop.is_set():
                load_record_guarded(big)
                reads["big"] += 1

        def busy_hostile() -> None:
            while not stop.is_set():
                for path in hostile:
                    try:
                        load_record_guarded(path)
                    except DataValidationError:
                        pass
                    reads["hostile"] += 1

        workers = [threading.Thread(target=busy_big, daemon=True), threading.Thread(target=busy_hostile, daemon=True)]
        for w in workers:
            w.start()
        time.sleep(1.0)
        loaded = [_identify(seed) for _ in range(args.repeats)]
        stop.set()
        for w in workers:
            w.join()
    a, b = statistics.median(alone), statistics.median(loaded)
    print(f"identify seed.csv alone:                     {a:6.2f} s (median of {args.repeats})")
    print(f"while others upload ({args.rows:,}-row CSV, hostile files): {b:6.2f} s"
          f"  ({reads['big']} large reads, {reads['hostile']} hostile files refused meanwhile)")
    print(f"ratio loaded / alone: {b / a:.2f}")


if __name__ == "__main__":
    main()
