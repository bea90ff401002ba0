"""Regenerate the README's Performance tables from benchmark JSON files.

    .venv/bin/python benchmarks/readme_table.py [--cpu benchmarks/results/bench-cpu.json]
                                                [--gpu benchmarks/results/bench-gpu.json]

Replaces the text between ``<!-- bench:cpu -->`` / ``<!-- /bench:cpu -->`` and the
``bench:gpu`` markers in README.md; a missing GPU file leaves the "no GPU run yet" note.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from engine.bench.report import render_summary, replace_between_markers

ROOT = Path(__file__).resolve().parents[1]
NO_GPU = ("No GPU run yet. On a GPU machine run `benchmarks/gpu_run.sh OUT`, copy "
          "`OUT/bench-gpu.json` to `benchmarks/results/` and rerun this script.")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cpu", type=Path, default=ROOT / "benchmarks/results/bench-cpu.json")
    ap.add_argument("--gpu", type=Path, default=ROOT / "benchmarks/results/bench-gpu.json")
    ap.add_argument("--readme", type=Path, default=ROOT / "README.md")
    args = ap.parse_args(argv)
    text = args.readme.read_text()
    text = replace_between_markers(text, "bench:cpu",
                                   render_summary(json.loads(args.cpu.read_text())))
    gpu = render_summary(json.loads(args.gpu.read_text())) if args.gpu.is_file() else NO_GPU
    text = replace_between_markers(text, "bench:gpu", gpu)
    args.readme.write_text(text)
    print(f"updated {args.readme}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
