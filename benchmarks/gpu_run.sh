#!/usr/bin/env bash
# GPU runbook (issue 6, and scripts/gpu_check.sh for issue 2): on a machine with a CUDA GPU
# and Python + CuPy already installed (no package index: installs nothing), from a copy
# of the repository:
#
#     benchmarks/gpu_run.sh OUT_DIR          # about 4-5 minutes
#
# 1. the GPU tests (pytest, tests selected by 'cupy'/'gpu'/'cuda' in their names or marks)
# 2. CuPy vs the CPU backend on 10^7 vertices (benchmarks/gpu_compare.py)
# 3. the full benchmark (frustum bench, time-boxed), JSON + Markdown table
# then a summary. Everything is written to OUT_DIR (logs, gpu-tests.xml, gpu-compare.json,
# bench-gpu.json/.md). PYTHON picks the interpreter (default: python3); BENCH_ARGS adds
# arguments to step 3 (e.g. "--quick"). Exit status: 0 when tests and comparison passed.
set -u -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-}"
if [ -z "$OUT" ]; then
    echo "usage: $0 OUT_DIR" >&2
    exit 2
fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
PY="${PYTHON:-python3}"
cd "$ROOT"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
START=$(date +%s)

echo "== frustum GPU run: $(date -u '+%Y-%m-%d %H:%M UTC'), repo $ROOT, results in $OUT"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total \
    --format=csv,noheader 2>&1 | tee "$OUT/nvidia-smi.txt"
"$PY" - <<'PY' 2>&1 | tee "$OUT/environment.txt"
import platform
print("python", platform.python_version())
for m in ("numpy", "cupy", "numba", "torch", "moderngl", "pytest"):
    try:
        print(m, __import__(m).__version__)
    except Exception as exc:
        print(m, "missing:", type(exc).__name__, exc)
from engine.render.backends.cupy_backend import cupy_unavailable_reason
print("cupy backend:", cupy_unavailable_reason() or "usable")
PY

echo "== 1/3 GPU tests"
TESTS_RC=0
if "$PY" -c "import pytest" 2>/dev/null; then
    timeout 150 "$PY" -m pytest tests -q -p no:cacheprovider -k "cupy or gpu or cuda" \
        --continue-on-collection-errors -rs --junitxml="$OUT/gpu-tests.xml" \
        2>&1 | tee "$OUT/gpu-tests.log" | tail -n 25
    TESTS_RC=$?
else
    echo "pytest is not installed here: GPU tests not run" | tee "$OUT/gpu-tests.log"
    TESTS_RC=4
fi

echo "== 2/3 CuPy vs CPU backend on 10^7 vertices"
timeout 90 "$PY" benchmarks/gpu_compare.py --n 1e7 --out "$OUT" 2>&1 | tee "$OUT/gpu-compare.log"
COMPARE_RC=$?

echo "== 3/3 full benchmark"
# The budget stops adding sizes after 150 s so the run ends well inside 5 minutes.
timeout 220 "$PY" -m engine bench --out "$OUT" --budget 150 ${BENCH_ARGS:-} \
    > "$OUT/bench.log" 2>&1
BENCH_RC=$?
grep -E "^(frustum bench|  host copy|  skip|  sync demo|wrote)" "$OUT/bench.log"

echo "== summary ($(( $(date +%s) - START )) s)"
echo "tests: exit $TESTS_RC (log $OUT/gpu-tests.log)"
grep -hE "^gpu_compare:" "$OUT/gpu-compare.log" || echo "gpu_compare: exit $COMPARE_RC"
for f in "$OUT"/bench-*.md; do
    [ -f "$f" ] && sed -n '/^Targets/,$p' "$f"
done
echo "bench: exit $BENCH_RC (log $OUT/bench.log)"
[ "$TESTS_RC" -eq 0 ] && [ "$COMPARE_RC" -eq 0 ]
