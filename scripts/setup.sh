#!/usr/bin/env bash
# Create .venv (if missing) and install the pinned requirements into it. Safe to re-run.
#   bash scripts/setup.sh          runtime packages only (requirements.txt): what the dashboard and CLI need
#   bash scripts/setup.sh --dev    also the test and development tools (requirements-dev.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=runtime
case "${1:-}" in
    "") ;;
    --dev) mode=dev ;;
    *) echo "usage: bash scripts/setup.sh [--dev]" >&2; exit 2 ;;
esac
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    echo "nlid needs Python >= 3.11 (found: $("$PYTHON" --version 2>&1))" >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
# One stamp per set: the hash of the files that set installs. The dev set includes the runtime set.
runtime_sha=$(sha256sum <requirements.txt | cut -d' ' -f1)
dev_sha=$(cat requirements.txt requirements-dev.txt | sha256sum | cut -d' ' -f1)
if [ "$mode" = dev ]; then file=requirements-dev.txt; want=$dev_sha; stamp=.venv/.requirements-dev.sha
else file=requirements.txt; want=$runtime_sha; stamp=.venv/.requirements.sha; fi
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "installing $file into .venv (about a minute on a fresh machine)..."
    log=.venv/pip-install.log
    # (byte-compiled here: worker processes run with PYTHONDONTWRITEBYTECODE, so a module without its .pyc
    # would be compiled again by every worker that imports it)
    if ! .venv/bin/python -m pip install --disable-pip-version-check -r "$file" >"$log" 2>&1; then
        cat "$log" >&2
        echo "pip install failed (log above)" >&2
        exit 1
    fi
    echo "$want" >"$stamp"
    if [ "$mode" = dev ]; then echo "$runtime_sha" >.venv/.requirements.sha; fi
fi
# This checkout on the environment's path and an `nlid` command, so `nlid ...` and `.venv/bin/python -m
# nlid_core ...` work from any directory (what an editable install gives, without a build step or network).
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
printf '%s\n' "$PWD" >"$site/nlid-checkout.pth"
printf '#!%s/.venv/bin/python\nimport sys\nfrom nlid_core.cli import command\nsys.exit(command())\n' "$PWD" >.venv/bin/nlid
chmod +x .venv/bin/nlid
