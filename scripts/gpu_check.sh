#!/usr/bin/env bash
# Issue 2's GPU check: the GPU tests, CuPy vs NumPy/Numba on 10^7 vertices and the
# benchmark, in under 5 minutes, with a printed summary. Same runbook as issue 6:
#     scripts/gpu_check.sh [OUT_DIR]      (default: gpu-check-results)
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/benchmarks/gpu_run.sh" "${1:-gpu-check-results}"
