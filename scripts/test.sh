#!/usr/bin/env bash
# Runs the whole test suite after setting up (extra arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/python -m pytest -q "$@"
