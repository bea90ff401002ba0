"""Regenerate the Performance page's tables (docs/performance.md) from benchmark JSON files.

    .venv/bin/python benchmarks/readme_table.py [--cpu benchmarks/results/bench-cpu.json]
                                                [--gpu benchmarks/results/bench-gpu.json]
                                                [--page docs/performance.md]

Replaces the text between ``<!-- bench:cpu -->`` / ``<!-- /bench:cpu -->`` and the
``bench:gpu`` markers in the page; a missing GPU file leaves the "no GPU run yet" note.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from engine.bench.report import render_summary, replace_between_markers

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "performance.md"
NO_GPU = ("No GPU run yet. On a GPU machine run `benchmarks/gpu_run.sh OUT`, copy "
          "`bench-gpu.json` from `OUT/gpu-run.tar.gz` to `benchmarks/results/` and rerun "
          "this script.")


def updated(text: str, cpu: dict, gpu: dict | None) -> str:
    """``text`` with the CPU and GPU tables between their markers replaced."""
    text = replace_between_markers(text, "bench:cpu", render_summary(cpu))
    return replace_between_markers(text, "bench:gpu",
                                   render_summary(gpu) if gpu is not None else NO_GPU)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cpu", type=Path, default=ROOT / "benchmarks/results/bench-cpu.json")
    ap.add_argument("--gpu", type=Path, default=ROOT / "benchmarks/results/bench-gpu.json")
    ap.add_argument("--page", type=Path, default=PAGE,
                    help="Markdown page holding the bench:cpu / bench:gpu markers")
    args = ap.parse_args(argv)
    cpu = json.loads(args.cpu.read_text())
    gpu = json.loads(args.gpu.read_text()) if args.gpu.is_file() else None
    args.page.write_text(updated(args.page.read_text(), cpu, gpu))
    print(f"updated {args.page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
