#!/usr/bin/env bash
# Set up, then run the whole test suite (a few minutes on 2 cores).
# Browser tests need Chromium: installed here with apt-get when running as root on Debian/Ubuntu;
# elsewhere they are skipped unless chromium is on PATH (or NLID_CHROMIUM points to it).
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
exec .venv/bin/python -m pytest -q "$@"
