#!/usr/bin/env bash
# Set up, then run the whole test suite (a few minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -q "$@"
