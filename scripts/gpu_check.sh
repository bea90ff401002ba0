#!/usr/bin/env bash
# Issue 2's GPU check (now issue 14's runbook): preflight, the GPU tests, CuPy vs Numba on
# 10^7 vertices, the benchmark and whole frames in under 240 s; one archive + one summary:
#     scripts/gpu_check.sh [OUT_DIR]      (default: gpu-check-results)
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/benchmarks/gpu_run.sh" "${1:-gpu-check-results}"
