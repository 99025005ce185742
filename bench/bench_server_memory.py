"""Benchmark: memory of one dashboard server shared by several engineers, during and after their sessions.

Starts ``streamlit run app.py`` as a lab server would, opens ``--sessions`` real browser sessions
(headless Chromium) one after the other, and in each uploads a ``--samples``-sample record (CSV,
time/force/displacement), loads it, opens the Nonlinearity page (evidence computed and cached) and
identifies a model on the Identify page. Then every session is closed, and the server is watched
until Streamlit has dropped the disconnected sessions (it keeps them two minutes for a reconnect,
and nlid's housekeeping thread makes it let go of them then rather than at the next disconnect)
and the caches' time limits have passed. A small session goes through the same steps before the
start is measured, so that one-time costs (imports, compiled kernels, the jobs' forkserver) are
part of the baseline.

Prints the server's resident memory (the Streamlit process and any worker still alive) at start,
after each session, at the peak, and after the sessions closed, with ratios against the start and
against the bytes of record data the sessions loaded. The server should return to within a few
hundred MB of where it started: nothing a session loaded may stay behind it.

Run: ``python bench/bench_server_memory.py [--sessions 4] [--samples 1000000] [--linger 200]``
(needs Playwright and Chromium, as the browser tests do). Cache time limits are shortened for the
run with ``NLID_CACHE_TTL_S`` so the benchmark does not wait half an hour.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, READY, serve  # noqa: E402


def _rss_mb(pid: int, children: bool = True) -> float:
    """Resident memory of ``pid`` (and its live children: the job forkserver and workers) in MB."""
    pids = [pid]
    if children:
        try:
            pids += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            pass
    return sum(_rss_one(p) for p in pids)


def _rss_one(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return float(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def _write_record(path: Path, n: int) -> int:
    rng = np.random.default_rng(1)
    t = np.arange(n) / 1000.0
    f = 10.0 * np.sin(2 * np.pi * (0.5 + 0.02 * t) * t)
    x = 1e-3 * np.sin(2 * np.pi * (0.5 + 0.02 * t) * t - 0.3) + 1e-6 * rng.standard_normal(n)
    with path.open("w") as fh:
        fh.write("t,f,x\n")
        np.savetxt(fh, np.column_stack([t, f, x]), delimiter=",", fmt="%.10g")
    return 3 * 8 * n


def _wait(pg) -> None:  # type: ignore[no-untyped-def]
    time.sleep(0.3)
    pg.wait_for_selector(READY, timeout=600_000)


def _session(browser, url: str, csv: Path) -> object:  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport={"width": 1400, "height": 1600})
    pg = ctx.new_page()
    pg.set_default_timeout(600_000)
    pg.goto(url)
    _wait(pg)
    pg.get_by_role("link", name="Data").first.click()
    _wait(pg)
    pg.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(csv))
    _wait(pg)
    pg.locator(".st-key-load_upload button").click()
    _wait(pg)
    pg.get_by_text("Loaded").first.wait_for()
    pg.get_by_role("link", name="Nonlinearity").first.click()
    _wait(pg)
    pg.get_by_role("link", name="Identify").first.click()
    _wait(pg)
    pg.locator(".st-key-run_identification button").click()
    _wait(pg)
    pg.locator(".st-key-results").wait_for()
    return ctx


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--linger", type=float, default=200.0, help="seconds to watch the server after the sessions close")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    if CHROMIUM is None:
        sys.exit("no Chromium binary (install the Debian package chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "long_record.csv"
        data_bytes = _write_record(csv, args.samples)
        print(f"record: {args.samples:,} samples, {csv.stat().st_size / 1e6:.0f} MB of CSV, "
              f"{data_bytes / 1e6:.0f} MB as float64; {args.sessions} sessions")
        with serve({"NLID_CACHE_TTL_S": "60"}) as server:
            url = server.url
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                # one small session through the same steps first: one-time costs (imports, compiled kernels,
                # the jobs' preloaded forkserver) belong to the baseline, not to the sessions measured
                small = Path(tmp) / "small_record.csv"
                _write_record(small, 20_000)
                _session(browser, url, small).close()  # type: ignore[attr-defined]
                time.sleep(2)
                start = _rss_mb(server.pid)
                print(f"server at start: {start:8.0f} MB (server alone {_rss_mb(server.pid, False):.0f} MB,"
                      " the rest is the jobs' preloaded forkserver)")
                peak = start
                contexts = []
                for k in range(args.sessions):
                    t0 = time.perf_counter()
                    contexts.append(_session(browser, url, csv))
                    now = _rss_mb(server.pid)
                    peak = max(peak, now)
                    print(f"after session {k + 1}:   {now:8.0f} MB  (server alone {_rss_mb(server.pid, False):.0f} MB;"
                          f" {time.perf_counter() - t0:.0f} s for upload, evidence, identification)")
                for ctx in contexts:
                    ctx.close()  # type: ignore[attr-defined]
                browser.close()
            t_close = time.time()
            after = _rss_mb(server.pid)
            while time.time() - t_close < args.linger:
                time.sleep(20)
                after = _rss_mb(server.pid)
                peak = max(peak, after)
                print(f"  {time.time() - t_close:4.0f} s after closing: {after:6.0f} MB"
                      f" (server alone {_rss_mb(server.pid, False):.0f} MB)")
            print(f"peak:               {peak:8.0f} MB (Streamlit forgets a closed tab's session after"
                  " server.disconnectedSessionTTL = 120 s; the cache's entries go after NLID_CACHE_TTL_S = 60 s here)")
            print(f"{args.linger:.0f} s after closing: {after:8.0f} MB")
            loaded = args.sessions * data_bytes / 1e6
            print(f"ratio peak / start:  {peak / start:.2f}")
            print(f"ratio after / start: {after / start:.2f}  (left behind {after - start:.0f} MB of the"
                  f" {loaded:.0f} MB of record data loaded: {100 * max(after - start, 0) / loaded:.0f} %)")


if __name__ == "__main__":
    main()
