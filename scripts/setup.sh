#!/usr/bin/env bash
# Create .venv (if missing) and install the pinned requirements into it. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    echo "nlid needs Python >= 3.11 (found: $("$PYTHON" --version 2>&1))" >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
stamp=.venv/.requirements.sha
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "installing requirements into .venv (about a minute on a fresh machine)..."
    log=.venv/pip-install.log
    if ! .venv/bin/python -m pip install --disable-pip-version-check -r requirements.txt >"$log" 2>&1; then
        cat "$log" >&2
        echo "pip install failed (log above)" >&2
        exit 1
    fi
    echo "$want" >"$stamp"
fi
