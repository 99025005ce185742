#!/usr/bin/env bash
# Set up, then start the dashboard (open the URL it prints; "Load the seed example" on the Home page).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PORT="${PORT:-8501}"
echo "nlid dashboard: http://localhost:${PORT}"
exec .venv/bin/python -m streamlit run app.py --server.port "$PORT"
