"""Benchmark: does one engineer's heavy upload slow down another engineer's identification?

Times what a dashboard user runs when pressing *Run identification* (``identify`` on a 1e5-sample
record, as a job in a worker process through ``app_support.jobs``, exactly as the Identify page
does) and the default CLI command on the seed example (``python -m nlid_core identify seed.csv``),
each alone and then while other users keep the server busy reading files through the guarded
loader (the path every upload takes): a large legitimate CSV (``--rows`` rows, read in full, over
and over) and the hostile files of ``tests/hostile_files.py`` (refused before they allocate).
Prints the median times and the ratios against the identification alone; before the guarded
loader, one xlsx zip bomb parsed in the server process cost 85-93 s of CPU and doubled to tripled
other sessions' identification times. The CLI also reads its own file through a worker at the
lowest priority, so it competes with the uploads for that part.

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

from app_support import jobs  # noqa: E402
from nlid_core.errors import DataValidationError  # noqa: E402
from nlid_core.estimate import identify  # noqa: E402
from nlid_core.examples import SEED_TRUTH, ExampleSpec, generate  # noqa: E402
from nlid_core.guard import load_record_guarded  # noqa: E402
from tests import hostile_files as hf  # noqa: E402


def _identify(seed: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "nlid_core", "identify", str(seed), "--quiet"], cwd=REPO, check=True)
    return time.perf_counter() - start


def _job(rec: object) -> float:
    start = time.perf_counter()
    job = jobs.Job(identify, (rec, "m0,m1,c1,c2,k1,k3"), progress_arg="progress").start()
    while not job.done:
        job.wait(0.1)
    assert job.result().success
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
        rec = generate(ExampleSpec(terms=SEED_TRUTH, duration_s=200.0, fs_hz=500.0, f1_hz=5.0, noise={"x": 4e-4},
                                   measured=("x",)), name="long")
        _identify(seed)  # numba cache warm
        _job(rec)
        alone = [_identify(seed) for _ in range(args.repeats)]
        alone_job = [_job(rec) for _ in range(args.repeats)]

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
        loaded_job = [_job(rec) for _ in range(args.repeats)]
        stop.set()
        for w in workers:
            w.join()
    print(f"others uploading: a {args.rows:,}-row CSV read {reads['big']} times, {reads['hostile']} hostile"
          " files refused, during the loaded runs")
    for what, one, two in (("Identify page job (1e5 samples)", alone_job, loaded_job),
                           ("CLI identify seed.csv", alone, loaded)):
        a, b = statistics.median(one), statistics.median(two)
        print(f"{what:34s} alone {a:6.2f} s, while others upload {b:6.2f} s (medians of {args.repeats}):"
              f" ratio {b / a:.2f}")


if __name__ == "__main__":
    main()
