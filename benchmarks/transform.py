"""Vertex projection throughput (issue 2), in one run:

    .venv/bin/python benchmarks/transform.py [--sizes 1e3,1e6] [--out DIR]

the naive NumPy function people write, the engine's NumPy backend, its Numba backend and
(with a GPU) the CuPy RawKernel, at N = 10^3 (many frames: per-frame overhead) and 10^6
(throughput). Prints vertices/s and the fraction of the host (or device) copy bandwidth
measured in the same run, then the CPU targets: engine CPU backend >= 4x the naive
function at 10^6, per-frame time <= the naive function at 10^3. Timings are
synchronised medians after a warm-up (engine.bench.timing). ``frustum bench`` runs
every path; this is the focused subset.
"""

from __future__ import annotations

import argparse

from engine.bench import render_markdown, run_benchmarks
from engine.bench.runner import write_results
from engine.cli.args import _sizes

PATHS = ("naive_numpy", "engine_numpy", "engine_numba", "engine_cupy")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=_sizes, default=[10**3, 10**6], metavar="N[,N...]")
    ap.add_argument("--out", default=None, metavar="DIR",
                    help="also write transform-<cpu|gpu>.json/.md there")
    args = ap.parse_args(argv)
    res = run_benchmarks(sizes=args.sizes, paths=PATHS, many_objects=None, sync_demo=False)
    print()
    print(render_markdown(res), end="")
    if args.out:
        write_results(res, args.out, prefix="transform")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
