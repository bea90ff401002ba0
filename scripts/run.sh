#!/usr/bin/env bash
# The main job: set up, then run the frustum CLI. With no arguments it renders the demo
# scene headless to out/demo.png (no GPU or display needed).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ "$#" -eq 0 ]; then
  set -- render demo --out out/demo.png
fi
exec .venv/bin/frustum "$@"
