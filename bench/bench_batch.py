"""Benchmark of the batch command: a 1000-draw Monte Carlo batch serially, on local processes and on a
local Dask cluster, stored in a study database each time; the stored results compared across runners,
and the coverage of the 95 % intervals.

The spec is the Monte Carlo example of ``docs/batch.md``: the Duffing oscillator m0 = 1 kg, c1 = 0.8 N s/m,
k1 = 1500 N/m, k3 = 2e5 N/m³ under a 5 N linear chirp 1-12 Hz over 3 s at 200 Hz (600 samples),
displacement measured with 1e-5 m noise, identified by the two-stage method. Each runner writes into
its own SQLite file in a temporary directory; the Dask cluster is a ``distributed.LocalCluster`` with
``--workers`` single-threaded worker processes (its start-up, ~5 s, is reported apart and not counted).
The local process pool's start-up (~1-3 s: each worker imports numpy, scipy and the compiled kernels)
is counted, as a user running the command sees it.

Run: ``python bench/bench_batch.py [--draws 1000] [--workers 2] [--skip-serial]``. Prints per runner the
elapsed time and items/s, whether every stored result equals the serial run's (``timing`` is not part
of a Monte Carlo result), and the coverage table of the serial run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SPEC = """\
kind = "monte_carlo"
study = "bench"
draws = {draws}
seed = 2026

[model]
terms = ["m0", "c1", "k1", "k3"]
values = {{ m0 = 1.0, c1 = 0.8, k1 = 1500.0, k3 = 2e5 }}

[excitation]
kind = "linear_chirp"
f0_hz = 1.0
f1_hz = 12.0
amplitude_n = 5.0
duration_s = 3.0
fs_hz = 200.0

[measurement]
channels = ["x"]
noise = {{ x = 1e-5 }}

[fit]
method = "two-stage"
"""


def _stored(url: str, study_id: int) -> dict[str, str]:
    from nlid_core.store import studies as S
    from nlid_core.store.db import open_store

    with open_store(url) as store:
        return {str(r.config["item_key"]): json.dumps(r.result, sort_keys=True)
                for r in S.list_runs(store, "bench", study_id) if "item_key" in r.config}


def _run(spec_path: Path, url: str, **kw: object) -> tuple[float, object]:
    from nlid_core.batch import load_spec, run_batch
    from nlid_core.store.db import open_store

    spec = load_spec(spec_path)
    with open_store(url) as store:
        t0 = time.perf_counter()
        res = run_batch(store, "bench", spec, **kw)  # type: ignore[arg-type]
        return time.perf_counter() - t0, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--skip-serial", action="store_true", help="compare processes and Dask only")
    args = ap.parse_args()

    import distributed

    from nlid_core.cli.batch import format_summary

    load0 = os.getloadavg()[0]
    tmp = Path(tempfile.mkdtemp(prefix="nlid-bench-batch-"))
    spec_path = tmp / "mc.toml"
    spec_path.write_text(SPEC.format(draws=args.draws))
    rows: list[tuple[str, float, int, str]] = []
    results: dict[str, dict[str, str]] = {}
    summary = None
    plan = [("processes", {"workers": args.workers})]
    if not args.skip_serial:
        plan.insert(0, ("serial", {"serial": True}))
    for name, kw in plan:
        url = f"sqlite:///{tmp / (name + '.sqlite')}"
        elapsed, res = _run(spec_path, url, **kw)
        rows.append((name, elapsed, res.n_computed, f"{res.workers} worker(s)"))  # type: ignore[attr-defined]
        results[name] = _stored(url, res.study_id)  # type: ignore[attr-defined]
        summary = summary or res
    t0 = time.perf_counter()
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        start_s = time.perf_counter() - t0
        url = f"sqlite:///{tmp / 'dask.sqlite'}"
        elapsed, res = _run(spec_path, url, scheduler=cluster.scheduler_address)
        rows.append(("dask", elapsed, res.n_computed,  # type: ignore[attr-defined]
                     f"{res.workers} worker(s); cluster start {start_s:.1f} s not counted"))  # type: ignore[attr-defined]
        results["dask"] = _stored(url, res.study_id)  # type: ignore[attr-defined]
    print(f"Monte Carlo batch: {args.draws} draws, 600-sample records, two-stage fits; {args.workers} workers;"
          f" load average before/after {load0:.1f}/{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"  {'runner':10s} {'elapsed':>9s} {'items/s':>8s}  notes")
    for name, elapsed, n, note in rows:
        print(f"  {name:10s} {elapsed:8.1f}s {n / elapsed:8.1f}  {note}")
    ref_name = rows[0][0]
    ref = results[ref_name]
    for name in results:
        if name != ref_name:
            same = results[name] == ref
            print(f"  stored results of {name} identical to {ref_name}: {'yes' if same else 'NO'} "
                  f"({len(results[name])} items)")
    print()
    print(format_summary(summary))


if __name__ == "__main__":
    main()
