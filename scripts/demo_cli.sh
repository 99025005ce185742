#!/usr/bin/env bash
# Set up, then identify the seed-000 benchmark example with the command-line interface.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p out
.venv/bin/python -m nlid_core example seed --out out/seed.csv
.venv/bin/python -m nlid_core identify out/seed.csv --terms m0,m1,c1,c2,k1,k3 --json out/seed-fit.json
echo "result written to out/seed-fit.json"
