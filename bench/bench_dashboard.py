"""Benchmark: dashboard page response times with a 1e5-sample record.

Each page is rendered once to warm caches, then timed over repeated reruns
(AppTest executes the page script as the server does; browser drawing is not
included). Also times one identification run from the Identify page. Prints
seconds per page and the ratio against the 2 s target.

Run: ``python bench/bench_dashboard.py``.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from streamlit.testing.v1 import AppTest  # noqa: E402

from app_support import state  # noqa: E402
from nlid_core.examples import ExampleSpec, SEED_TRUTH, generate  # noqa: E402

PAGES = ["home", "data", "nonlinearity", "model", "identify", "validate", "identifiability", "design", "export",
         "teaching"]
TARGET_S = 2.0


def main() -> None:
    rec = generate(ExampleSpec(terms=SEED_TRUTH, duration_s=200.0, fs_hz=500.0, f1_hz=5.0, noise={"x": 4e-4},
                               measured=("x",)), name="long")
    print(f"record: {rec.n:,} samples")
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600)
    at.run()
    at.session_state[state.RECORDS] = {"long": rec}
    at.run()
    at.switch_page("app_pages/model.py").run()
    at.switch_page("app_pages/identify.py").run()
    t0 = time.perf_counter()
    at.button(key="run_identification").click().run()
    t_fit = time.perf_counter() - t0
    assert not at.exception, at.exception
    print(f"identification run from the Identify page: {t_fit:.2f} s")
    for page in PAGES:
        at.switch_page(f"app_pages/{page}.py").run()  # first load (fills caches)
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - t0)
        assert not at.exception, (page, at.exception)
        med = statistics.median(times)
        print(f"  {page:13s} {med:6.3f} s  ({med / TARGET_S:5.2f} of the {TARGET_S:g} s target)")


if __name__ == "__main__":
    main()
