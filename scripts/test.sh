#!/usr/bin/env bash
# Set up, then run the whole test suite: the type check, then the tests on two worker processes. `bash scripts/test.sh --fast` runs the fast part (pure computation,
# under 3 minutes, or the run fails); any other arguments go to pytest and skip the type check. Browser tests need Chromium: installed here with apt-get when
# running as root on Debian/Ubuntu; elsewhere they are skipped unless chromium is on PATH (or NLID_CHROMIUM
# points to it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
if ! command -v chromium >/dev/null 2>&1 && [ -z "${NLID_CHROMIUM:-}" ]; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing Chromium for the browser tests (about a minute)..."
        log=$(mktemp)
        if ! { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; } >"$log" 2>&1; then
            cat "$log" >&2
            echo "could not install chromium (log above); browser tests will be skipped" >&2
        fi
        rm -f "$log"
    else
        echo "chromium not found: browser tests will be skipped (install it, or set NLID_CHROMIUM)"
    fi
fi
# Compiled kernels and term programs are cached outside the source tree, reused by later runs. numba checks a
# cached function against its own file only, not against the kernels it calls from other files, so the cache is
# kept per version of the compiled sources: a changed kernel never runs inside a stale caller.
cache="${XDG_CACHE_HOME:-$HOME/.cache}/nlid"
kernels=$(grep -rl --include='*.py' 'njit' nlid_core | LC_ALL=C sort | xargs cat | sha1sum | cut -c1-12)
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$cache/numba/$kernels}"
if [ "${1:-}" = "--fast" ]; then
    shift
    exec .venv/bin/python -m pytest -q -n 2 --dist loadfile \
        -m "not browser and not app and not postgres and not subprocess and not lint and not slow" "$@"
fi
if [ "$#" -eq 0 ]; then
    # the numba kernels are compiled once into the cache while mypy runs, not by each test worker
    .venv/bin/python scripts/warm_kernels.py &
    warm=$!
    trap 'kill "$warm" 2>/dev/null || true' EXIT
    echo "type check: mypy --strict nlid_core"
    .venv/bin/python -m mypy --strict --cache-dir "$cache/mypy" nlid_core
    wait "$warm"
    export NLID_TYPECHECKED=1
    exec .venv/bin/python -m pytest -q -n 2 --dist loadfile --durations=25
fi
exec .venv/bin/python -m pytest -q "$@"
