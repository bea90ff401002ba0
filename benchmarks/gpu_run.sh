#!/usr/bin/env bash
# GPU runbook (issues 2, 6 and 14): on a machine with a CUDA GPU and Python + CuPy already
# installed (the GPU machine's image: no package index, installs nothing), from a copy of
# the repository:
#
#     benchmarks/gpu_run.sh OUT_DIR          # under 240 s
#
# preflight (compile + launch every kernel; stops the run if that fails), the GPU tests
# (pytest -m "gpu or nvrtc", a skip is a failure), CuPy vs Numba on 10^7 vertices, the
# GPU benchmark and whole frames. Writes exactly two files to OUT_DIR: gpu-run.tar.gz
# (every log, junit XML, JSON and Markdown) and gpu-summary.txt, both refreshed after
# every step. See benchmarks/gpu_run.py and docs/gpu.md. PYTHON picks the interpreter
# (default python3); GPU_RUN_BUDGET the seconds for the whole run (default 230).
# Exit status: 0 all passed, 3 the preflight failed, 1 something else failed.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -z "${1:-}" ]; then
    echo "usage: $0 OUT_DIR" >&2
    exit 2
fi
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
exec "${PYTHON:-python3}" "$ROOT/benchmarks/gpu_run.py" "$1" --budget "${GPU_RUN_BUDGET:-230}"
